//! The oracle: attention computed the obvious way, in f64, one query row at a time.
//!
//! Every stage's expected values come from here, so this file favours being evidently correct
//! over being clever: for each row it forms all scores, applies the mask, and calls the
//! two-pass softmax in [`crate::softmax::two_pass_shared`]. No tiling, no online rescaling, no
//! exp2. The one concession to speed is that rows whose query heads share a K/V head (GQA)
//! read each key and value row together; each row's arithmetic is what it would be alone.
//! The same entry point can also emulate the math in bf16/f16 (see [`attention_rows`]), which
//! is what the FlashAttention-3 tolerance compares a kernel against.

use crate::dtype::{LowPrecision, Precision, round_f32};
use crate::mask::Mask;
use crate::shape::Shape;
use crate::softmax::two_pass_shared;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ops::Range;

/// Output of a forward pass: `o` is `[batch, seqlen_q, heads, head_dim]`, `lse` is
/// `[batch, heads, seqlen_q]` holding the natural-log log-sum-exp of the scaled scores.
#[derive(Clone, Debug, PartialEq)]
pub struct Attention {
    pub o: Vec<f64>,
    pub lse: Vec<f64>,
}

/// One query row of one head of one batch element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowId {
    pub batch: usize,
    pub head: usize,
    pub row: usize,
}

/// The oracle's answer for one query row: `head_dim` outputs and the row's LSE.
#[derive(Clone, Debug, PartialEq)]
pub struct RowResult {
    pub o: Vec<f64>,
    pub lse: f64,
    /// For [`Precision::Emulated`]: `sqrt(Σ_j (w_j δs_j)²)`, with `w_j` the softmax weights
    /// and `δs_j` each score's rounding error. To first order the emulated LSE errs by
    /// `Σ_j w_j δs_j`, a sum whose terms can cancel by luck; this is its typical size, the
    /// standard deviation it would have if the signs were random. 0 for exact math.
    pub lse_spread: f64,
}

/// Every row of a shape in (batch, head, row) order, the order LSE is stored in.
pub fn all_rows(shape: &Shape) -> Vec<RowId> {
    let mut rows = Vec::with_capacity(shape.lse_len());
    for batch in 0..shape.batch {
        for head in 0..shape.heads {
            for row in 0..shape.seqlen_q {
                rows.push(RowId { batch, head, row });
            }
        }
    }
    rows
}

/// Exact f64 attention: `O = softmax(scale · Q Kᵀ + mask) V` and the LSE, for every row.
/// A fully masked row gives `O = 0` and `LSE = −∞`.
pub fn attention(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
) -> Attention {
    attention_with_precision(q, k, v, shape, mask, scale, Precision::F64)
}

/// [`attention`] for every row, in the chosen precision (see [`attention_rows`]).
pub fn attention_with_precision(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    precision: Precision,
) -> Attention {
    let rows = all_rows(shape);
    let results = attention_rows(q, k, v, shape, mask, scale, &rows, precision);
    Attention::from_rows(shape, &rows, results.into_iter().map(|r| (r.o, r.lse)))
}

impl Attention {
    /// Assembles per-row results `(o, lse)`, given in the order of `rows`, into full O
    /// and LSE tensors. Every row-wise computation (oracle, split-KV) ends with this.
    pub(crate) fn from_rows(
        shape: &Shape,
        rows: &[RowId],
        results: impl IntoIterator<Item = (Vec<f64>, f64)>,
    ) -> Attention {
        let mut out = Attention {
            o: vec![0.0; shape.o_len()],
            lse: vec![0.0; shape.lse_len()],
        };
        for (id, (o, lse)) in rows.iter().zip(results) {
            let start = shape.q_index(id.batch, id.row, id.head, 0);
            out.o[start..start + shape.head_dim].copy_from_slice(&o);
            out.lse[shape.lse_index(id.batch, id.head, id.row)] = lse;
        }
        out
    }
}

/// The oracle for a chosen set of query rows only (the GPU checks of large problems sample
/// rows), computed in parallel with rayon. Results are in the order of `rows`.
///
/// `precision` picks the arithmetic:
///
/// * [`Precision::F64`]: exact math in f64.
/// * [`Precision::Emulated(p)`](Precision::Emulated): the math of PyTorch eager attention run in
///   dtype `p` with f32 accumulation, i.e. FlashAttention-3's `attention_ref(..., upcast=False)`:
///   1. Q, K, V are rounded to `p` (a no-op when the caller already rounded them);
///   2. `S_ij = round_p(Σ_d q_id·k_jd)`, the dot product accumulated in f32 (products of two
///      16-bit values are exact in f32, so only the running sum rounds);
///   3. `S_ij ← round_p(f32(S_ij · scale))`, the scaling done in f32 and stored in `p`;
///      masked entries become −∞;
///   4. softmax in f32 from those values: `m = max_j S_ij`, `e_j = f32 exp(S_ij − m)`,
///      `l = f32 Σ_j e_j`, and `P_ij = round_p(e_j / l)`;
///   5. `O_id = round_p(Σ_j P_ij·v_jd)`, accumulated in f32;
///   6. `LSE_i = m + ln l` from the f32 softmax.
///
/// The summation order is sequential, which a GPU's is not; the rounding of each stored
/// intermediate, which dominates the error, is exactly as listed.
#[allow(clippy::too_many_arguments)]
pub fn attention_rows(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    rows: &[RowId],
    precision: Precision,
) -> Vec<RowResult> {
    shape.check_inputs(q, k, v);
    assert!(
        scale > 0.0 && scale.is_finite(),
        "softmax scale must be positive and finite"
    );
    for id in rows {
        assert!(
            id.batch < shape.batch && id.head < shape.heads && id.row < shape.seqlen_q,
            "{id:?} is outside {shape:?}"
        );
    }
    // The query heads of one GQA group read the same K/V head, and with the same batch element
    // and query row they see the same keys of it. Such rows are computed together, so that each
    // K and V row is read from memory (and, emulated, rounded) once for all of them rather than
    // once per row: a decode check's 32 query heads share 8 K/V heads, which at 32k keys are
    // gigabytes in f64, and reading them 4 times over was most of the oracle's time.
    let mut groups: BTreeMap<(usize, usize, usize), Vec<usize>> = BTreeMap::new();
    for (n, id) in rows.iter().enumerate() {
        groups
            .entry((id.batch, shape.kv_head(id.head), id.row))
            .or_default()
            .push(n);
    }
    let groups: Vec<Vec<usize>> = groups.into_values().collect();
    let results: Vec<Vec<RowResult>> = groups
        .par_iter()
        .map(|members| {
            let ids: Vec<RowId> = members.iter().map(|&n| rows[n]).collect();
            match precision {
                Precision::F64 => rows_f64(q, k, v, shape, mask, scale, &ids),
                Precision::Emulated(p) => rows_emulated(q, k, v, shape, mask, scale, &ids, p),
            }
        })
        .collect();
    let mut out: Vec<Option<RowResult>> = vec![None; rows.len()];
    for (members, results) in groups.iter().zip(results) {
        for (&n, result) in members.iter().zip(results) {
            out[n] = Some(result);
        }
    }
    out.into_iter()
        .map(|r| r.expect("every row is in a group"))
        .collect()
}

/// Query vector `q[b, i, h, :]`.
fn q_row<'a>(q: &'a [f64], shape: &Shape, id: RowId) -> &'a [f64] {
    let start = shape.q_index(id.batch, id.row, id.head, 0);
    &q[start..start + shape.head_dim]
}

/// Key or value vector `x[b, j, hk, :]`.
fn kv_row<'a>(x: &'a [f64], shape: &Shape, b: usize, j: usize, hk: usize) -> &'a [f64] {
    let start = shape.kv_index(b, j, hk, 0);
    &x[start..start + shape.head_dim]
}

/// The K/V head and the keys that every row of `ids` reads: [`attention_rows`] passes rows of
/// one batch element and query row whose heads share a K/V head.
fn shared_keys(shape: &Shape, mask: &Mask, ids: &[RowId]) -> (usize, Range<usize>) {
    let first = ids[0];
    let hk = shape.kv_head(first.head);
    assert!(
        ids.iter().all(|id| id.batch == first.batch
            && id.row == first.row
            && shape.kv_head(id.head) == hk),
        "rows computed together must share their keys and values"
    );
    (
        hk,
        mask.key_range(first.row, shape.seqlen_q, shape.seqlen_k),
    )
}

/// Exact rows for `ids` (see [`shared_keys`]): one pass over the keys forms every row's
/// scores, then one pass over the values their two-pass softmaxes.
fn rows_f64(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    ids: &[RowId],
) -> Vec<RowResult> {
    // Keys outside the mask's range would enter with score −∞ and weight exactly 0, so they
    // are left out rather than computed and discarded (half the work for causal masks).
    let (hk, keys) = shared_keys(shape, mask, ids);
    let batch = ids[0].batch;
    let queries: Vec<&[f64]> = ids.iter().map(|&id| q_row(q, shape, id)).collect();
    let mut scores: Vec<Vec<f64>> = ids.iter().map(|_| Vec::with_capacity(keys.len())).collect();
    for j in keys.clone() {
        let kj = kv_row(k, shape, batch, j, hk);
        for (qi, row_scores) in queries.iter().zip(&mut scores) {
            row_scores.push(qi.iter().zip(kj).map(|(a, b)| a * b).sum());
        }
    }
    let scores: Vec<&[f64]> = scores.iter().map(Vec::as_slice).collect();
    let values = keys.map(|j| kv_row(v, shape, batch, j, hk));
    two_pass_shared(&scores, values, shape.head_dim, scale)
        .into_iter()
        .map(|(o, lse)| RowResult {
            o,
            lse,
            lse_spread: 0.0,
        })
        .collect()
}

/// One row's step 4 of the emulation (see [`attention_rows`]).
struct EmulatedSoftmax {
    max: f32,
    exps: Vec<f32>,
    sum: f32,
    /// `e_j / l` rounded to the dtype: the P that multiplies V.
    probs: Vec<f32>,
}

impl EmulatedSoftmax {
    fn new(scores: &[f64], p: LowPrecision) -> Self {
        let max = scores
            .iter()
            .fold(f32::NEG_INFINITY, |m, &s| m.max(s as f32));
        let exps: Vec<f32> = scores.iter().map(|&s| (s as f32 - max).exp()).collect();
        let sum = exps.iter().fold(0.0f32, |acc, &e| acc + e);
        let probs = exps
            .iter()
            .map(|&e| p.round(f64::from(e / sum)) as f32)
            .collect();
        EmulatedSoftmax {
            max,
            exps,
            sum,
            probs,
        }
    }
}

/// Emulated rows for `ids` (see [`shared_keys`]), each computed exactly as it would be alone:
/// the rows only share the rounding of each K and V row to `p`, done once for all of them.
#[allow(clippy::too_many_arguments)]
fn rows_emulated(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    ids: &[RowId],
    p: LowPrecision,
) -> Vec<RowResult> {
    let (hk, keys) = shared_keys(shape, mask, ids);
    let (batch, d) = (ids[0].batch, shape.head_dim);
    if keys.is_empty() {
        let masked = RowResult {
            o: vec![0.0; d],
            lse: f64::NEG_INFINITY,
            lse_spread: 0.0,
        };
        return vec![masked; ids.len()];
    }
    // Step 1.
    let queries: Vec<Vec<f64>> = ids
        .iter()
        .map(|&id| p.rounded(q_row(q, shape, id)))
        .collect();
    let scale_f32 = round_f32(scale);
    // Steps 2 and 3: scores in p, only for the keys the mask allows (the rest would be −∞),
    // each with its rounding error against the exact score of the same rounded inputs.
    let mut scores: Vec<Vec<f64>> = ids.iter().map(|_| Vec::with_capacity(keys.len())).collect();
    let mut score_errors = scores.clone();
    let mut kj = vec![0.0; d];
    for j in keys.clone() {
        kj.copy_from_slice(kv_row(k, shape, batch, j, hk));
        p.round_slice(&mut kj);
        for ((qi, row_scores), row_errors) in queries.iter().zip(&mut scores).zip(&mut score_errors)
        {
            let (dot, exact) = qi
                .iter()
                .zip(&kj)
                .fold((0.0f32, 0.0f64), |(acc, ex), (a, b)| {
                    (acc + (*a as f32) * (*b as f32), ex + a * b)
                });
            let s = p.round(round_f32(p.round(f64::from(dot)) * scale_f32));
            row_scores.push(s);
            row_errors.push((s - exact * scale).abs());
        }
    }
    // Step 4: f32 softmax, P stored in p.
    let softmaxes: Vec<EmulatedSoftmax> =
        scores.iter().map(|s| EmulatedSoftmax::new(s, p)).collect();
    // Step 5: PV with f32 accumulation, O stored in p.
    let mut accs = vec![vec![0.0f32; d]; ids.len()];
    let mut vj = vec![0.0f32; d];
    for (n, j) in keys.enumerate() {
        for (x, vd) in vj.iter_mut().zip(kv_row(v, shape, batch, j, hk)) {
            *x = p.round(*vd) as f32;
        }
        for (acc, softmax) in accs.iter_mut().zip(&softmaxes) {
            let pj = softmax.probs[n];
            for (a, x) in acc.iter_mut().zip(&vj) {
                *a += pj * x;
            }
        }
    }
    // Step 6, and the LSE's error spread.
    softmaxes
        .iter()
        .zip(&accs)
        .zip(&score_errors)
        .map(|((softmax, acc), errors)| {
            let lse_spread = softmax
                .exps
                .iter()
                .zip(errors)
                .map(|(&e, &err)| (f64::from(e / softmax.sum) * err).powi(2))
                .sum::<f64>()
                .sqrt();
            RowResult {
                o: acc.iter().map(|&a| p.round(f64::from(a))).collect(),
                lse: f64::from(softmax.max + softmax.sum.ln()),
                lse_spread,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// A 2×2 problem worked out by hand. q0 = (1, 0), q1 = (0, 1); k0 = (ln 3, 0), k1 = (0, 0);
    /// v0 = (1, 2), v1 = (3, 4); scale 1.
    /// Row 0 scores (ln 3, 0): weights 3/4, 1/4, so O = (3/4·1 + 1/4·3, 3/4·2 + 1/4·4)
    /// = (1.5, 2.5) and LSE = ln 4. Row 1 scores (0, 0): weights 1/2 each, O = (2, 3), LSE = ln 2.
    fn hand_problem() -> (Vec<f64>, Vec<f64>, Vec<f64>, Shape) {
        let shape = Shape::mha(1, 1, 2, 2, 2);
        let q = vec![1.0, 0.0, 0.0, 1.0];
        let k = vec![3f64.ln(), 0.0, 0.0, 0.0];
        let v = vec![1.0, 2.0, 3.0, 4.0];
        (q, k, v, shape)
    }

    #[test]
    fn two_by_two_by_hand() {
        let (q, k, v, shape) = hand_problem();
        let out = attention(&q, &k, &v, &shape, &Mask::None, 1.0);
        assert_relative_eq!(
            out.o.as_slice(),
            [1.5, 2.5, 2.0, 3.0].as_slice(),
            epsilon = 1e-14
        );
        assert_relative_eq!(
            out.lse.as_slice(),
            [4f64.ln(), 2f64.ln()].as_slice(),
            epsilon = 1e-14
        );
    }

    #[test]
    fn two_by_two_causal_by_hand() {
        // Row 0 now sees only k0: O = v0, LSE = ln 3. Row 1 is unchanged.
        let (q, k, v, shape) = hand_problem();
        let out = attention(&q, &k, &v, &shape, &Mask::causal(), 1.0);
        assert_relative_eq!(
            out.o.as_slice(),
            [1.0, 2.0, 2.0, 3.0].as_slice(),
            epsilon = 1e-14
        );
        assert_relative_eq!(
            out.lse.as_slice(),
            [3f64.ln(), 2f64.ln()].as_slice(),
            epsilon = 1e-14
        );
    }

    #[test]
    fn scale_multiplies_the_scores() {
        // With scale 2, row 0's scores become (2 ln 3, 0): weights 9/10 and 1/10, LSE = ln 10.
        let (q, k, v, shape) = hand_problem();
        let out = attention(&q, &k, &v, &shape, &Mask::None, 2.0);
        assert_relative_eq!(out.o[0], 0.9 * 1.0 + 0.1 * 3.0, epsilon = 1e-14);
        assert_relative_eq!(out.lse[0], 10f64.ln(), epsilon = 1e-14);
    }

    #[test]
    fn first_rows_see_nothing_when_queries_outnumber_keys() {
        let shape = Shape::mha(1, 1, 3, 1, 1);
        let out = attention(
            &[1.0, 2.0, 3.0],
            &[1.0],
            &[7.0],
            &shape,
            &Mask::causal(),
            1.0,
        );
        assert_eq!(out.o, vec![0.0, 0.0, 7.0]);
        assert_eq!(out.lse[..2], [f64::NEG_INFINITY, f64::NEG_INFINITY]);
        assert_relative_eq!(out.lse[2], 3.0, epsilon = 1e-14);
    }

    #[test]
    fn gqa_heads_read_their_kv_head() {
        // Two query heads share kv head 0, two share kv head 1; one key, so O = that head's v.
        let shape = Shape::new(1, 4, 2, 1, 1, 1);
        let out = attention(
            &[0.1, 0.2, 0.3, 0.4],
            &[1.0, 1.0],
            &[5.0, 9.0],
            &shape,
            &Mask::None,
            1.0,
        );
        assert_eq!(out.o, vec![5.0, 5.0, 9.0, 9.0]);
        assert_relative_eq!(
            out.lse.as_slice(),
            [0.1, 0.2, 0.3, 0.4].as_slice(),
            epsilon = 1e-15
        );
    }

    #[test]
    fn sampled_rows_match_the_full_oracle() {
        let shape = Shape::new(2, 4, 2, 5, 7, 3);
        let q: Vec<f64> = (0..shape.q_len()).map(|i| (i as f64 * 0.7).sin()).collect();
        let k: Vec<f64> = (0..shape.kv_len())
            .map(|i| (i as f64 * 1.3).cos())
            .collect();
        let v: Vec<f64> = (0..shape.kv_len())
            .map(|i| (i as f64 * 0.4).sin() * 2.0)
            .collect();
        let mask = Mask::sliding_window(Some(2), Some(1));
        let full = attention(&q, &k, &v, &shape, &mask, 0.6);
        let rows = [
            RowId {
                batch: 1,
                head: 3,
                row: 4,
            },
            RowId {
                batch: 0,
                head: 1,
                row: 0,
            },
        ];
        let sampled = attention_rows(&q, &k, &v, &shape, &mask, 0.6, &rows, Precision::F64);
        for (id, r) in rows.iter().zip(&sampled) {
            let start = shape.q_index(id.batch, id.row, id.head, 0);
            assert_eq!(r.o.as_slice(), &full.o[start..start + 3]);
            assert_eq!(r.lse, full.lse[shape.lse_index(id.batch, id.head, id.row)]);
        }
    }

    #[test]
    fn emulation_is_close_to_exact_and_not_equal_to_it() {
        let shape = Shape::mha(1, 2, 8, 16, 16);
        let q: Vec<f64> = (0..shape.q_len())
            .map(|i| (i as f64 * 0.37).sin())
            .collect();
        let k: Vec<f64> = (0..shape.kv_len())
            .map(|i| (i as f64 * 0.91).cos())
            .collect();
        let v: Vec<f64> = (0..shape.kv_len())
            .map(|i| (i as f64 * 0.53).sin())
            .collect();
        let exact = attention(&q, &k, &v, &shape, &Mask::causal(), 0.25);
        for p in [LowPrecision::Bf16, LowPrecision::F16] {
            let low = attention_with_precision(
                &q,
                &k,
                &v,
                &shape,
                &Mask::causal(),
                0.25,
                Precision::Emulated(p),
            );
            let err = exact
                .o
                .iter()
                .zip(&low.o)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                err > 0.0 && err < 16.0 * p.unit_roundoff(),
                "{}: {err}",
                p.name()
            );
            for (a, b) in exact.lse.iter().zip(&low.lse) {
                assert_relative_eq!(a, b, epsilon = 32.0 * p.unit_roundoff());
            }
            // Every output is representable in the low-precision dtype.
            assert!(low.o.iter().all(|&x| p.round(x) == x));
        }
    }

    #[test]
    fn emulation_of_a_fully_masked_row_is_zero_and_neg_inf() {
        let shape = Shape::mha(1, 1, 2, 1, 2);
        let out = attention_with_precision(
            &[1.0; 4],
            &[1.0; 2],
            &[1.0; 2],
            &shape,
            &Mask::causal(),
            1.0,
            Precision::Emulated(LowPrecision::Bf16),
        );
        assert_eq!(out.o[..2], [0.0, 0.0]);
        assert_eq!(out.lse[0], f64::NEG_INFINITY);
        assert_eq!(out.o[2..], [1.0, 1.0]);
    }
}
