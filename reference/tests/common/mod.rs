//! Strategies and assertions shared by the property tests: random attention problems of small
//! sizes (so that thousands of cases run in seconds) and a closeness check that prints the
//! evidence when it fails.

#![allow(dead_code)]

use proptest::prelude::*;
use reference::error::Tolerance;
use reference::{Align, Mask, Shape};

/// One random attention problem.
#[derive(Clone, Debug)]
pub struct Problem {
    pub shape: Shape,
    pub q: Vec<f64>,
    pub k: Vec<f64>,
    pub v: Vec<f64>,
    pub mask: Mask,
    pub scale: f64,
}

/// Any alignment.
pub fn align() -> impl Strategy<Value = Align> {
    prop_oneof![Just(Align::TopLeft), Just(Align::BottomRight)]
}

/// Any mask, windows included, with window sides small enough to actually cut rows.
pub fn mask() -> impl Strategy<Value = Mask> {
    prop_oneof![
        Just(Mask::None),
        align().prop_map(Mask::Causal),
        (
            proptest::option::of(0usize..6),
            proptest::option::of(0usize..6),
            align()
        )
            .prop_map(|(left, right, align)| Mask::SlidingWindow { left, right, align }),
    ]
}

/// A shape with GQA groups, up to `max_seq` rows and keys (zero included: empty sequences are
/// legal and every implementation must survive them) and up to `max_dim` head dimensions.
pub fn shape(max_seq: usize, max_dim: usize) -> impl Strategy<Value = Shape> {
    (
        1usize..=2,
        1usize..=2,
        1usize..=3,
        0..=max_seq,
        0..=max_seq,
        1..=max_dim,
    )
        .prop_map(|(batch, kv_heads, group, seqlen_q, seqlen_k, head_dim)| {
            Shape::new(
                batch,
                kv_heads * group,
                kv_heads,
                seqlen_q,
                seqlen_k,
                head_dim,
            )
        })
}

/// `n` values drawn from `-range..range`.
pub fn values(n: usize, range: f64) -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(-range..range, n)
}

/// A problem for the given shape strategy, with entries in ±3 and a scale in [0.05, 2).
pub fn problem_with(shape: impl Strategy<Value = Shape>) -> impl Strategy<Value = Problem> {
    shape.prop_flat_map(|shape| {
        (
            values(shape.q_len(), 3.0),
            values(shape.kv_len(), 3.0),
            values(shape.kv_len(), 3.0),
            mask(),
            0.05f64..2.0,
        )
            .prop_map(move |(q, k, v, mask, scale)| Problem {
                shape,
                q,
                k,
                v,
                mask,
                scale,
            })
    })
}

/// The default problem: up to 12 rows and keys, head_dim up to 8.
pub fn problem() -> impl Strategy<Value = Problem> {
    problem_with(shape(12, 8))
}

/// Element-wise `|a − e| <= atol + rtol·|e|` (matching infinities are equal), failing the
/// property with the full error report otherwise.
pub fn check_close(
    what: &str,
    actual: &[f64],
    expected: &[f64],
    atol: f64,
    rtol: f64,
) -> Result<(), TestCaseError> {
    let check = Tolerance::AllClose { atol, rtol }.check(actual, expected);
    prop_assert!(check.passed, "{}: {}", what, check);
    Ok(())
}
