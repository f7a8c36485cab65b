//! Split-KV ("flash-decoding"): each of several thread blocks handles one chunk of the keys for
//! the same query rows, writes a partial `(O, LSE)`, and a combine step merges them.
//!
//! Splitting is exact because softmax over a union of key sets is a reweighting of the softmax
//! over each set: with partial results `(O_c, LSE_c)` per chunk `c`,
//!
//! ```text
//! LSE = ln Σ_c exp(LSE_c)            O = Σ_c exp(LSE_c − LSE) · O_c
//! ```
//!
//! Empty or fully masked chunks have `LSE_c = −∞` and weight exactly zero.

use crate::mask::Mask;
use crate::oracle::{Attention, RowId, all_rows};
use crate::shape::Shape;
use crate::softmax::{MASKED, OnlineSoftmax};
use rayon::prelude::*;
use std::ops::Range;

/// What one split writes to memory for one query row: its normalized output and its LSE.
#[derive(Clone, Debug, PartialEq)]
pub struct Partial {
    pub o: Vec<f64>,
    pub lse: f64,
}

/// `num_splits` contiguous chunks of `0..seqlen_k` with sizes differing by at most one (the
/// first ones larger); some are empty when `num_splits > seqlen_k`.
pub fn even_chunks(seqlen_k: usize, num_splits: usize) -> Vec<Range<usize>> {
    assert!(num_splits > 0, "need at least one split");
    let (base, extra) = (seqlen_k / num_splits, seqlen_k % num_splits);
    let mut start = 0;
    (0..num_splits)
        .map(|c| {
            let end = start + base + usize::from(c < extra);
            let chunk = start..end;
            start = end;
            chunk
        })
        .collect()
}

/// The online-softmax state of one query row after seeing only keys `keys` (mask applied).
#[allow(clippy::too_many_arguments)]
pub fn partial_state(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    id: RowId,
    keys: Range<usize>,
) -> OnlineSoftmax {
    let d = shape.head_dim;
    let hk = shape.kv_head(id.head);
    let q_start = shape.q_index(id.batch, id.row, id.head, 0);
    let q_i = &q[q_start..q_start + d];
    let mut scores = Vec::with_capacity(keys.len());
    let mut values = Vec::with_capacity(keys.len() * d);
    for j in keys {
        let kv_start = shape.kv_index(id.batch, j, hk, 0);
        scores.push(if mask.allows(id.row, j, shape.seqlen_q, shape.seqlen_k) {
            q_i.iter()
                .zip(&k[kv_start..kv_start + d])
                .map(|(a, b)| a * b)
                .sum()
        } else {
            MASKED
        });
        values.extend_from_slice(&v[kv_start..kv_start + d]);
    }
    let mut state = OnlineSoftmax::empty(d, scale);
    state.update(&scores, &values);
    state
}

/// The combine kernel: merges the partials of one row by their LSEs. All partials `−∞` (every
/// key masked) gives `O = 0`, `LSE = −∞`.
pub fn combine(partials: &[Partial]) -> Partial {
    assert!(!partials.is_empty(), "nothing to combine");
    let d = partials[0].o.len();
    let max_lse = partials.iter().fold(f64::NEG_INFINITY, |m, p| m.max(p.lse));
    if max_lse == f64::NEG_INFINITY {
        return Partial {
            o: vec![0.0; d],
            lse: f64::NEG_INFINITY,
        };
    }
    // Weights relative to the largest LSE, so the exponentials cannot overflow.
    let weights: Vec<f64> = partials.iter().map(|p| (p.lse - max_lse).exp()).collect();
    let total: f64 = weights.iter().sum();
    let mut o = vec![0.0; d];
    for (p, w) in partials.iter().zip(&weights) {
        assert_eq!(p.o.len(), d, "partials with different head_dim");
        for (o_d, p_d) in o.iter_mut().zip(&p.o) {
            *o_d += w / total * p_d;
        }
    }
    Partial {
        o,
        lse: max_lse + total.ln(),
    }
}

/// The split-KV forward pass: for every row, one partial per chunk, then [`combine`]. `chunks`
/// must be contiguous ranges covering `0..seqlen_k` in order; empty chunks are allowed.
pub fn split_forward(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    chunks: &[Range<usize>],
) -> Attention {
    shape.check_inputs(q, k, v);
    check_partition(chunks, shape.seqlen_k);
    let rows = all_rows(shape);
    let results: Vec<Partial> = rows
        .par_iter()
        .map(|&id| {
            let partials: Vec<Partial> = chunks
                .iter()
                .map(|keys| {
                    let (o, lse) =
                        partial_state(q, k, v, shape, mask, scale, id, keys.clone()).finish();
                    Partial { o, lse }
                })
                .collect();
            combine(&partials)
        })
        .collect();
    Attention::from_rows(shape, &rows, results.into_iter().map(|r| (r.o, r.lse)))
}

fn check_partition(chunks: &[Range<usize>], seqlen_k: usize) {
    assert!(!chunks.is_empty(), "need at least one chunk");
    let mut expected_start = 0;
    for chunk in chunks {
        assert!(
            chunk.start == expected_start && chunk.start <= chunk.end,
            "chunks must be contiguous and in order: {chunks:?}"
        );
        expected_start = chunk.end;
    }
    assert_eq!(
        expected_start, seqlen_k,
        "chunks must cover 0..seqlen_k: {chunks:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn even_chunks_cover_the_keys() {
        assert_eq!(even_chunks(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(even_chunks(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
        assert_eq!(even_chunks(0, 1), vec![0..0]);
    }

    #[test]
    fn combine_by_hand() {
        // Chunk sums 1 and 3 (LSE ln 1, ln 3): weights 1/4 and 3/4, total LSE ln 4.
        let a = Partial {
            o: vec![4.0],
            lse: 0.0,
        };
        let b = Partial {
            o: vec![8.0],
            lse: 3f64.ln(),
        };
        let empty = Partial {
            o: vec![123.0],
            lse: f64::NEG_INFINITY,
        };
        let c = combine(&[a, empty, b]);
        assert_relative_eq!(c.o[0], 7.0, epsilon = 1e-14);
        assert_relative_eq!(c.lse, 4f64.ln(), epsilon = 1e-14);
    }

    #[test]
    fn combining_only_empty_partials_gives_zero_and_neg_inf() {
        let empty = Partial {
            o: vec![0.0, 0.0],
            lse: f64::NEG_INFINITY,
        };
        assert_eq!(combine(&[empty.clone(), empty.clone()]), empty);
    }

    #[test]
    #[should_panic(expected = "contiguous")]
    fn overlapping_chunks_are_rejected() {
        check_partition(&[0..3, 2..5], 5);
    }
}
