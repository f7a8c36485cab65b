//! Softmax-weighted sums of value rows, computed two ways: the textbook two-pass form and the
//! one-pass "online" form that FlashAttention is built on.
//!
//! Both compute, for one query row with scores `s_j` and value rows `v_j`,
//!
//! ```text
//! O   = Σ_j exp(scale·s_j) v_j / Σ_j exp(scale·s_j)
//! LSE = ln Σ_j exp(scale·s_j)
//! ```
//!
//! The two-pass form finds the maximum first and then sums, so it needs every score at once.
//! The online form sees the scores block by block, keeping a running maximum `m`, a running sum
//! `l` and an un-normalized accumulator `acc`, and rescales `l` and `acc` by `2^(m_old - m_new)`
//! whenever the maximum grows. Nothing is approximated: after the last block the state holds
//! exactly the same sums, so `acc / l` is exactly the softmax-weighted average (up to rounding).
//!
//! The online form is written the way the kernels write it: scores are multiplied by
//! `scale · log2(e)` and exponentiated with `exp2`, because the GPU's `ex2.approx` instruction
//! is cheaper than `exp`, and the maximum is kept in that log2 domain. The LSE is converted back
//! to the natural log only in [`OnlineSoftmax::finish`].

use crate::dtype::LowPrecision;
use std::f64::consts::{LN_2, LOG2_E};

/// Masked scores are passed as −∞: exp(−∞) = 0 removes them from both sums.
pub const MASKED: f64 = f64::NEG_INFINITY;

/// Two-pass softmax of one row of scores: first the maximum, then the normalized exponentials.
/// Returns the probabilities; an all-masked row gives all zeros rather than 0/0.
pub fn softmax(scores: &[f64], scale: f64) -> Vec<f64> {
    let max = scores
        .iter()
        .fold(f64::NEG_INFINITY, |m, &s| m.max(scale * s));
    if max == f64::NEG_INFINITY {
        return vec![0.0; scores.len()];
    }
    let exps: Vec<f64> = scores.iter().map(|&s| (scale * s - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

/// Two-pass attention for one query row: `values` holds `scores.len()` rows of `head_dim`
/// values, row-major. Returns `(O, LSE)`; a row whose scores are all −∞ gives `(0, −∞)`.
/// This (as [`two_pass_shared`]) is the oracle's inner loop, deliberately written without any
/// of the online tricks.
pub fn two_pass(scores: &[f64], values: &[f64], head_dim: usize, scale: f64) -> (Vec<f64>, f64) {
    assert_eq!(
        values.len(),
        scores.len() * head_dim,
        "values must be [scores.len(), head_dim]"
    );
    let mut rows = two_pass_shared(&[scores], values.chunks_exact(head_dim), head_dim, scale);
    rows.pop().expect("one row in, one row out")
}

/// [`two_pass`] for several query rows that weigh the same value rows, as the query heads of
/// one GQA group do: `scores[r][j]` is row r's score for value row j, and `values` yields the
/// value rows one by one. Returns each row's `(O, LSE)`, computed exactly as [`two_pass`]
/// computes it for that row alone. The value rows are read once for all the rows, and where
/// they lie rather than copied: at long contexts, reading them is what the oracle's softmax
/// spends its time on (copying them for each row took two thirds of the whole oracle's).
pub fn two_pass_shared<'v>(
    scores: &[&[f64]],
    values: impl IntoIterator<Item = &'v [f64]>,
    head_dim: usize,
    scale: f64,
) -> Vec<(Vec<f64>, f64)> {
    let maxes: Vec<f64> = scores
        .iter()
        .map(|row| row.iter().fold(f64::NEG_INFINITY, |m, &s| m.max(scale * s)))
        .collect();
    let mut sums = vec![0.0; scores.len()];
    let mut outputs = vec![vec![0.0; head_dim]; scores.len()];
    let mut value_rows = 0;
    for (j, v) in values.into_iter().enumerate() {
        assert_eq!(v.len(), head_dim, "value rows must have head_dim elements");
        for (r, row) in scores.iter().enumerate() {
            assert!(j < row.len(), "one value row per score");
            // A row whose scores are all −∞ would compute exp(−∞ − (−∞)) = NaN: it is
            // answered (0, −∞) below instead.
            if maxes[r] == f64::NEG_INFINITY {
                continue;
            }
            let e = (scale * row[j] - maxes[r]).exp();
            sums[r] += e;
            for (o_d, v_d) in outputs[r].iter_mut().zip(v) {
                *o_d += e * v_d;
            }
        }
        value_rows = j + 1;
    }
    assert!(
        scores.iter().all(|row| row.len() == value_rows),
        "one value row per score"
    );
    outputs
        .into_iter()
        .zip(maxes.into_iter().zip(sums))
        .map(|(mut o, (max, sum))| {
            if max == f64::NEG_INFINITY {
                return (o, f64::NEG_INFINITY);
            }
            for o_d in &mut o {
                *o_d /= sum;
            }
            (o, max + sum.ln())
        })
        .collect()
}

/// The running state of one query row's online softmax: everything a kernel keeps in registers
/// for that row between K/V tiles.
#[derive(Clone, Debug, PartialEq)]
pub struct OnlineSoftmax {
    /// `scale · log2(e)`: multiplies raw scores into the log2 domain.
    scale_log2: f64,
    /// Running maximum of `scale_log2 · s` over the scores seen; −∞ before any unmasked score.
    max_log2: f64,
    /// Running `Σ 2^(scale_log2·s_j − max_log2)`, the softmax denominator relative to the max.
    sum: f64,
    /// Running `Σ 2^(scale_log2·s_j − max_log2) v_j`, the un-normalized output.
    acc: Vec<f64>,
}

impl OnlineSoftmax {
    /// The state before any score has been seen. It is the identity of [`OnlineSoftmax::merge`].
    /// `scale` is the softmax scale (usually `1/√head_dim`) and must be positive and finite.
    pub fn empty(head_dim: usize, scale: f64) -> Self {
        assert!(
            scale > 0.0 && scale.is_finite(),
            "softmax scale must be positive and finite"
        );
        OnlineSoftmax {
            scale_log2: scale * LOG2_E,
            max_log2: f64::NEG_INFINITY,
            sum: 0.0,
            acc: vec![0.0; head_dim],
        }
    }

    /// Folds in one block of raw (unscaled) scores and the matching value rows, `values` being
    /// `[scores.len(), head_dim]` row-major. Masked scores are −∞; a block of only −∞ changes
    /// nothing.
    pub fn update(&mut self, scores: &[f64], values: &[f64]) {
        self.update_impl(scores, values, None);
    }

    /// As [`OnlineSoftmax::update`], but rounds each probability `p` to `precision` before it
    /// multiplies V, as a tensor-core kernel does when it converts P to bf16/f16 for the PV
    /// matrix multiply. The denominator still sums the unrounded `p`, as the kernels do (they
    /// sum P in f32 registers before converting it).
    pub fn update_rounding_p(&mut self, scores: &[f64], values: &[f64], precision: LowPrecision) {
        self.update_impl(scores, values, Some(precision));
    }

    // ANCHOR: update
    fn update_impl(&mut self, scores: &[f64], values: &[f64], round_p: Option<LowPrecision>) {
        let head_dim = self.acc.len();
        assert_eq!(
            values.len(),
            scores.len() * head_dim,
            "values must be [scores.len(), head_dim]"
        );
        let mut block_max = f64::NEG_INFINITY;
        for &s in scores {
            assert!(
                !s.is_nan() && s != f64::INFINITY,
                "scores must be finite or -inf (masked)"
            );
            block_max = block_max.max(s * self.scale_log2);
        }
        let new_max = self.max_log2.max(block_max);
        // The "−∞ − (−∞)" guard: if this row has seen no unmasked score yet, subtracting the
        // maximum would compute exp2(NaN). Every kernel has the same check.
        if new_max == f64::NEG_INFINITY {
            return;
        }
        // exp2(−∞ − finite) = 0, so a first real block simply overwrites the empty state.
        let rescale = (self.max_log2 - new_max).exp2();
        self.sum *= rescale;
        for a in &mut self.acc {
            *a *= rescale;
        }
        for (&s, v) in scores.iter().zip(values.chunks_exact(head_dim)) {
            let p = (s * self.scale_log2 - new_max).exp2();
            self.sum += p;
            let p_for_pv = round_p.map_or(p, |precision| precision.round(p));
            for (a, v_d) in self.acc.iter_mut().zip(v) {
                *a += p_for_pv * v_d;
            }
        }
        self.max_log2 = new_max;
    }
    // ANCHOR_END: update

    /// Combines the states of two disjoint sets of scores of the same row, as if one state had
    /// seen both: the split-KV combine. Both are rescaled to the larger maximum first.
    // ANCHOR: merge
    pub fn merge(&self, other: &Self) -> Self {
        assert_eq!(
            self.scale_log2, other.scale_log2,
            "merging states with different scales"
        );
        assert_eq!(
            self.acc.len(),
            other.acc.len(),
            "merging states with different head_dim"
        );
        let max_log2 = self.max_log2.max(other.max_log2);
        if max_log2 == f64::NEG_INFINITY {
            return self.clone();
        }
        let a = (self.max_log2 - max_log2).exp2();
        let b = (other.max_log2 - max_log2).exp2();
        OnlineSoftmax {
            scale_log2: self.scale_log2,
            max_log2,
            sum: a * self.sum + b * other.sum,
            acc: self
                .acc
                .iter()
                .zip(&other.acc)
                .map(|(x, y)| a * x + b * y)
                .collect(),
        }
    }
    // ANCHOR_END: merge

    /// The final `(O, LSE)`: `O = acc / sum` and `LSE = ln 2 · (max_log2 + log2 sum)`, the
    /// natural-log LSE. A row that saw no unmasked score gives `O = 0`, `LSE = −∞`.
    pub fn finish(&self) -> (Vec<f64>, f64) {
        if self.sum == 0.0 {
            return (vec![0.0; self.acc.len()], f64::NEG_INFINITY);
        }
        let o = self.acc.iter().map(|a| a / self.sum).collect();
        (o, self.lse())
    }

    /// The natural-log LSE of the scores seen so far (−∞ if none).
    pub fn lse(&self) -> f64 {
        if self.sum == 0.0 {
            f64::NEG_INFINITY
        } else {
            (self.max_log2 + self.sum.log2()) * LN_2
        }
    }

    /// Running maximum in the log2 domain, `max_j scale·log2(e)·s_j`.
    pub fn max_log2(&self) -> f64 {
        self.max_log2
    }

    /// Running denominator, relative to `2^max_log2`.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Running un-normalized output, relative to `2^max_log2`.
    pub fn acc(&self) -> &[f64] {
        &self.acc
    }

    /// The value-vector length this state accumulates.
    pub fn head_dim(&self) -> usize {
        self.acc.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn softmax_of_log_weights_recovers_the_weights() {
        let p = softmax(&[0.0, 2f64.ln(), 3f64.ln(), MASKED], 1.0);
        assert_relative_eq!(
            p.as_slice(),
            [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0, 0.0].as_slice(),
            epsilon = 1e-15
        );
    }

    #[test]
    fn two_pass_by_hand() {
        // Scores ln 1 and ln 3 at scale 1: weights 1/4 and 3/4, LSE = ln 4.
        let (o, lse) = two_pass(&[0.0, 3f64.ln()], &[4.0, 0.0, 0.0, 8.0], 2, 1.0);
        assert_relative_eq!(o.as_slice(), [1.0, 6.0].as_slice(), epsilon = 1e-14);
        assert_relative_eq!(lse, 4f64.ln(), epsilon = 1e-14);
    }

    #[test]
    fn shared_values_give_each_row_its_own_two_pass() {
        let values = [4.0, 0.0, 0.0, 8.0, 1.0, -1.0];
        let rows: [&[f64]; 3] = [&[0.0, 3f64.ln(), MASKED], &[MASKED; 3], &[1.0, -2.0, 0.5]];
        let shared = two_pass_shared(&rows, values.chunks_exact(2), 2, 0.7);
        for (row, got) in rows.iter().zip(shared) {
            assert_eq!(got, two_pass(row, &values, 2, 0.7));
        }
        assert_eq!(two_pass(rows[1], &values, 2, 0.7), (vec![0.0; 2], MASKED));
    }

    #[test]
    #[should_panic(expected = "one value row per score")]
    fn shared_values_must_match_the_scores() {
        two_pass_shared(&[&[0.0, 1.0]], [[1.0].as_slice()], 1, 1.0);
    }

    #[test]
    fn online_by_hand_rescales_when_the_max_grows() {
        let mut state = OnlineSoftmax::empty(1, 1.0);
        state.update(&[0.0], &[4.0]);
        assert_eq!(
            (state.max_log2(), state.sum(), state.acc()),
            (0.0, 1.0, [4.0].as_slice())
        );
        // A score of ln 3 lifts the max to log2(3): the old sum 1 is rescaled to 1/3.
        state.update(&[3f64.ln()], &[8.0]);
        assert_relative_eq!(state.max_log2(), 3f64.log2(), epsilon = 1e-15);
        assert_relative_eq!(state.sum(), 1.0 / 3.0 + 1.0, epsilon = 1e-15);
        let (o, lse) = state.finish();
        assert_relative_eq!(o[0], 0.25 * 4.0 + 0.75 * 8.0, epsilon = 1e-14);
        assert_relative_eq!(lse, 4f64.ln(), epsilon = 1e-14);
    }

    #[test]
    fn masked_blocks_leave_the_state_untouched() {
        let mut state = OnlineSoftmax::empty(2, 0.5);
        state.update(&[MASKED, MASKED], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(state, OnlineSoftmax::empty(2, 0.5));
        state.update(&[1.0], &[5.0, 6.0]);
        let before = state.clone();
        state.update(&[MASKED], &[f64::MAX, 0.0]);
        assert_eq!(state, before);
        assert_eq!(state.finish().0, vec![5.0, 6.0]);
    }

    #[test]
    fn rounding_p_changes_only_the_numerator() {
        let mut exact = OnlineSoftmax::empty(1, 1.0);
        let mut rounded = exact.clone();
        let scores = [0.0, -0.3];
        exact.update(&scores, &[1.0, 1.0]);
        rounded.update_rounding_p(&scores, &[1.0, 1.0], LowPrecision::Bf16);
        assert_eq!(exact.sum(), rounded.sum());
        let p1 = (-0.3 * LOG2_E).exp2();
        assert_eq!(rounded.acc()[0], 1.0 + LowPrecision::Bf16.round(p1));
        assert_ne!(exact.acc()[0], rounded.acc()[0]);
    }

    #[test]
    #[should_panic(expected = "finite or -inf")]
    fn nan_scores_are_rejected() {
        OnlineSoftmax::empty(1, 1.0).update(&[f64::NAN], &[1.0]);
    }
}
