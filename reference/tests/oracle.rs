//! Properties of the f64 oracle itself: it agrees with the textbook formula, treats GQA as
//! MHA with shared K/V, ignores a constant shift of the scores, and handles fully masked rows.

mod common;

use common::{Problem, check_close, problem, problem_with, shape};
use proptest::prelude::*;
use reference::dtype::round_f32;
use reference::oracle::{all_rows, attention_with_precision};
use reference::softmax::two_pass;
use reference::split_kv::{even_chunks, split_forward};
use reference::tiled::flash_forward;
use reference::{
    Align, LowPrecision, Mask, Precision, RowId, RowResult, Shape, attention, attention_rows,
};

/// `O_i = Σ_j exp(scale·s_ij) v_j / Σ_j exp(scale·s_ij)` with no max subtraction at all:
/// safe here because |scale·s| ≤ 2·3·3·8 keeps exp in range, and independent of the oracle's code.
fn textbook(p: &Problem) -> (Vec<f64>, Vec<f64>) {
    let s = &p.shape;
    let mut o = vec![0.0; s.o_len()];
    let mut lse = vec![0.0; s.lse_len()];
    for b in 0..s.batch {
        for h in 0..s.heads {
            for i in 0..s.seqlen_q {
                let mut denominator = 0.0;
                let mut numerator = vec![0.0; s.head_dim];
                for j in 0..s.seqlen_k {
                    if !p.mask.allows(i, j, s.seqlen_q, s.seqlen_k) {
                        continue;
                    }
                    let score: f64 = (0..s.head_dim)
                        .map(|d| {
                            p.q[s.q_index(b, i, h, d)] * p.k[s.kv_index(b, j, s.kv_head(h), d)]
                        })
                        .sum();
                    let weight = (p.scale * score).exp();
                    denominator += weight;
                    for (d, n) in numerator.iter_mut().enumerate() {
                        *n += weight * p.v[s.kv_index(b, j, s.kv_head(h), d)];
                    }
                }
                for (d, n) in numerator.iter().enumerate() {
                    o[s.q_index(b, i, h, d)] = if denominator > 0.0 {
                        n / denominator
                    } else {
                        0.0
                    };
                }
                lse[s.lse_index(b, h, i)] = denominator.ln();
            }
        }
    }
    (o, lse)
}

/// Repeats every kv head `group` times so that query head h reads its own copy.
fn repeat_kv(x: &[f64], shape: &Shape) -> Vec<f64> {
    let mha = Shape::mha(
        shape.batch,
        shape.heads,
        shape.seqlen_q,
        shape.seqlen_k,
        shape.head_dim,
    );
    let mut out = vec![0.0; mha.kv_len()];
    for b in 0..shape.batch {
        for j in 0..shape.seqlen_k {
            for h in 0..shape.heads {
                for d in 0..shape.head_dim {
                    out[mha.kv_index(b, j, h, d)] = x[shape.kv_index(b, j, shape.kv_head(h), d)];
                }
            }
        }
    }
    out
}

/// Appends one coordinate to every head vector: `value(is_query)` for Q, and for K.
fn append_coordinate(x: &[f64], head_dim: usize, value: f64) -> Vec<f64> {
    x.chunks_exact(head_dim)
        .flat_map(|row| row.iter().copied().chain(std::iter::once(value)))
        .collect()
}

/// One row of [`attention_rows`] computed alone, as the oracle computed every row before it
/// took the rows sharing a K/V head together: the step numbers are those of its doc.
fn one_row(p: &Problem, id: RowId, precision: Precision) -> RowResult {
    let s = &p.shape;
    let d = s.head_dim;
    let hk = s.kv_head(id.head);
    let q_start = s.q_index(id.batch, id.row, id.head, 0);
    let qi = &p.q[q_start..q_start + d];
    let kv = |x: &[f64], j: usize| {
        let start = s.kv_index(id.batch, j, hk, 0);
        x[start..start + d].to_vec()
    };
    let keys = p.mask.key_range(id.row, s.seqlen_q, s.seqlen_k);
    let Precision::Emulated(low) = precision else {
        let scores: Vec<f64> = keys
            .clone()
            .map(|j| qi.iter().zip(kv(&p.k, j)).map(|(a, b)| a * b).sum())
            .collect();
        let values: Vec<f64> = keys.flat_map(|j| kv(&p.v, j)).collect();
        let (o, lse) = two_pass(&scores, &values, d, p.scale);
        return RowResult {
            o,
            lse,
            lse_spread: 0.0,
        };
    };
    if keys.is_empty() {
        return RowResult {
            o: vec![0.0; d],
            lse: f64::NEG_INFINITY,
            lse_spread: 0.0,
        };
    }
    let qi = low.rounded(qi);
    let (mut scores, mut errors) = (Vec::new(), Vec::new());
    for j in keys.clone() {
        let kj = low.rounded(&kv(&p.k, j));
        let (mut dot, mut exact) = (0.0f32, 0.0f64);
        for (a, b) in qi.iter().zip(&kj) {
            dot += (*a as f32) * (*b as f32);
            exact += a * b;
        }
        let score = low.round(round_f32(low.round(f64::from(dot)) * round_f32(p.scale)));
        scores.push(score);
        errors.push((score - exact * p.scale).abs());
    }
    let max = scores
        .iter()
        .fold(f32::NEG_INFINITY, |m, &x| m.max(x as f32));
    let exps: Vec<f32> = scores.iter().map(|&x| (x as f32 - max).exp()).collect();
    let mut sum = 0.0f32;
    for e in &exps {
        sum += e;
    }
    let mut acc = vec![0.0f32; d];
    for (j, e) in keys.zip(&exps) {
        let pj = low.round(f64::from(e / sum)) as f32;
        for (a, x) in acc.iter_mut().zip(low.rounded(&kv(&p.v, j))) {
            *a += pj * x as f32;
        }
    }
    let spread: f64 = exps
        .iter()
        .zip(&errors)
        .map(|(&e, &err)| (f64::from(e / sum) * err).powi(2))
        .sum();
    RowResult {
        o: acc.iter().map(|&a| low.round(f64::from(a))).collect(),
        lse: f64::from(max + sum.ln()),
        lse_spread: spread.sqrt(),
    }
}

/// The bits of a row's results, so that 0 and −0 (or two NaNs) are told apart.
fn bits(r: &RowResult) -> (Vec<u64>, u64, u64) {
    (
        r.o.iter().map(|x| x.to_bits()).collect(),
        r.lse.to_bits(),
        r.lse_spread.to_bits(),
    )
}

proptest! {
    #[test]
    fn oracle_equals_textbook_formula(p in problem()) {
        let got = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        let (o, lse) = textbook(&p);
        check_close("O", &got.o, &o, 1e-12, 1e-10)?;
        check_close("LSE", &got.lse, &lse, 1e-12, 1e-12)?;
    }

    #[test]
    fn gqa_equals_mha_with_repeated_kv(p in problem()) {
        let gqa = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        let s = p.shape;
        let mha_shape = Shape::mha(s.batch, s.heads, s.seqlen_q, s.seqlen_k, s.head_dim);
        let (k, v) = (repeat_kv(&p.k, &s), repeat_kv(&p.v, &s));
        let mha = attention(&p.q, &k, &v, &mha_shape, &p.mask, p.scale);
        // Same arithmetic in the same order: the results are identical, not merely close.
        prop_assert_eq!(gqa, mha);
    }

    #[test]
    fn shifting_scores_leaves_attention_output_unchanged(p in problem(), shift in -500.0f64..500.0) {
        // An extra coordinate 1 in every query and `shift` in every key adds `shift` to every
        // score of every row.
        let s = p.shape;
        let wider = Shape { head_dim: s.head_dim + 1, ..s };
        let q = append_coordinate(&p.q, s.head_dim, 1.0);
        let k = append_coordinate(&p.k, s.head_dim, shift);
        let v = append_coordinate(&p.v, s.head_dim, 0.0);
        let base = attention(&p.q, &p.k, &p.v, &s, &p.mask, p.scale);
        let shifted = attention(&q, &k, &v, &wider, &p.mask, p.scale);
        let o: Vec<f64> = shifted.o.chunks_exact(wider.head_dim).flat_map(|r| r[..s.head_dim].to_vec()).collect();
        check_close("O", &o, &base.o, 1e-9, 1e-9)?;
        let lse: Vec<f64> = base.lse.iter().map(|l| l + p.scale * shift).collect();
        check_close("LSE", &shifted.lse, &lse, 1e-9, 1e-12)?;
    }

    #[test]
    fn fully_masked_rows_give_zero_and_neg_inf_in_every_implementation(
        p in problem_with(shape(8, 4)),
        extra_queries in 1usize..5,
    ) {
        // Bottom-right causal with more queries than keys: the first seqlen_q − seqlen_k rows
        // see nothing.
        let s = Shape { seqlen_q: p.shape.seqlen_k + extra_queries, ..p.shape };
        let q: Vec<f64> = (0..s.q_len()).map(|i| (i as f64).sin()).collect();
        let mask = Mask::causal();
        let runs = [
            ("oracle", attention(&q, &p.k, &p.v, &s, &mask, p.scale)),
            ("emulated bf16", attention_with_precision(&q, &p.k, &p.v, &s, &mask, p.scale, Precision::Emulated(LowPrecision::Bf16))),
            ("tiled", flash_forward(&q, &p.k, &p.v, &s, &mask, p.scale, 3, 2)),
            ("split-kv", split_forward(&q, &p.k, &p.v, &s, &mask, p.scale, &even_chunks(s.seqlen_k, 3))),
        ];
        for (name, out) in runs {
            for id in all_rows(&s) {
                let lse = out.lse[s.lse_index(id.batch, id.head, id.row)];
                let start = s.q_index(id.batch, id.row, id.head, 0);
                let o = &out.o[start..start + s.head_dim];
                prop_assert!(o.iter().all(|x| !x.is_nan()) && !lse.is_nan(), "{} produced NaN", name);
                if id.row < extra_queries {
                    prop_assert_eq!(lse, f64::NEG_INFINITY, "{} row {}", name, id.row);
                    prop_assert!(o.iter().all(|&x| x == 0.0), "{} row {}: {:?}", name, id.row, o);
                } else {
                    prop_assert!(lse.is_finite(), "{} row {} should see keys", name, id.row);
                }
            }
        }
    }

    #[test]
    fn sampled_rows_equal_the_full_oracle(p in problem(), picks in proptest::collection::vec(any::<usize>(), 0..10)) {
        let rows = all_rows(&p.shape);
        // With seqlen_q = 0 there is nothing to pick, and asking for no rows must give none.
        let chosen: Vec<RowId> = if rows.is_empty() {
            Vec::new()
        } else {
            picks.iter().map(|&i| rows[i % rows.len()]).collect()
        };
        let full = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        let sampled = attention_rows(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, &chosen, Precision::F64);
        prop_assert_eq!(sampled.len(), chosen.len());
        for (id, r) in chosen.iter().zip(&sampled) {
            let start = p.shape.q_index(id.batch, id.row, id.head, 0);
            prop_assert_eq!(r.o.as_slice(), &full.o[start..start + p.shape.head_dim]);
            prop_assert_eq!(r.lse, full.lse[p.shape.lse_index(id.batch, id.head, id.row)]);
        }
    }

    #[test]
    fn rows_computed_together_equal_rows_computed_alone(p in problem(), picks in proptest::collection::vec(any::<usize>(), 0..10)) {
        // All rows (every head of a GQA group together), then a few picked ones, repeats and
        // lone heads of a group included.
        let rows = all_rows(&p.shape);
        let picked: Vec<RowId> = picks.iter().filter(|_| !rows.is_empty()).map(|&i| rows[i % rows.len()]).collect();
        for precision in [Precision::F64, Precision::Emulated(LowPrecision::Bf16), Precision::Emulated(LowPrecision::F16)] {
            for chosen in [&rows, &picked] {
                let together = attention_rows(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, chosen, precision);
                for (&id, got) in chosen.iter().zip(&together) {
                    prop_assert_eq!(bits(got), bits(&one_row(&p, id, precision)), "{:?} {:?}", precision, id);
                }
            }
        }
    }

    #[test]
    fn causal_alignments_agree_on_square_problems(p in problem()) {
        let s = Shape { seqlen_k: p.shape.seqlen_q, ..p.shape };
        let kv: Vec<f64> = (0..s.kv_len()).map(|i| (i as f64 * 0.3).cos()).collect();
        let top_left = attention(&p.q, &kv, &kv, &s, &Mask::Causal(Align::TopLeft), p.scale);
        let bottom_right = attention(&p.q, &kv, &kv, &s, &Mask::Causal(Align::BottomRight), p.scale);
        prop_assert_eq!(top_left, bottom_right);
    }

    #[test]
    fn emulated_precision_error_is_a_few_unit_roundoffs(p in problem()) {
        let exact = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        let max_abs = |x: &[f64]| x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        // Rounding a score of size |scale·s| moves its weight by a relative u·|scale·s|, and
        // rounding P, V and O each add about u: so |ΔO| ≲ u·max|v|·(1 + max|scale·s|). The
        // factor 4 is slack over the worst ratio seen in thousands of cases (about 0.8).
        let max_score = p.scale * max_abs(&p.q) * max_abs(&p.k) * p.shape.head_dim as f64;
        for precision in [LowPrecision::Bf16, LowPrecision::F16] {
            let low = attention_with_precision(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, Precision::Emulated(precision));
            let bound = 4.0 * precision.unit_roundoff() * max_abs(&p.v) * (1.0 + max_score);
            check_close(precision.name(), &low.o, &exact.o, bound, 0.0)?;
            prop_assert!(low.o.iter().all(|&x| precision.round(x) == x), "O is not stored in {}", precision.name());
        }
    }
}
