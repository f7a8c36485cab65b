//! Comparing a backward run's dQ, dK and dV with `reference`'s f64 backward.
//!
//! The oracle is the backward as a function of the forward's saved outputs
//! ([`reference::backward_rows`]): given the same Q, K, V, dO and the O and LSE the forward
//! stage wrote, it computes the exact gradients, and the same math with P and dS rounded to
//! the dtype as the kernels' tensor-core operands are. Each gradient must then pass
//! FlashAttention-3's rule: its largest error at most twice that of the rounded math, plus
//! the rounding of its largest value to the dtype. The forward's own error is not in the
//! bound: the forward stage's tests hold it to its own.
//!
//! Every element must have been written (they start as NaN). Small problems are checked on
//! every row; larger ones on a seeded sample of dQ rows and of dK/dV rows, which
//! `backward_rows` computes one at a time.

use crate::check::{FULL_CHECK_MACS, SAMPLED_ROWS, o_atol, rows_to_check};
use crate::{DType, Problem};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reference::{KvRowId, Precision, RowId};
use serde::Serialize;

/// One gradient's errors against the exact backward, and the bound that judged them.
#[derive(Clone, Debug, Serialize)]
pub struct GradientCheck {
    pub name: &'static str,
    pub rows_checked: usize,
    pub rows_total: usize,
    pub max_abs: f64,
    pub rel_fro: f64,
    /// The same math with P and dS rounded to the dtype, against f64.
    pub lowp_max_abs: f64,
    pub atol: f64,
    pub bound: f64,
    pub passed: bool,
}

/// The outcome of one backward check.
#[derive(Clone, Debug, Serialize)]
pub struct BackwardCheck {
    /// Elements of dQ, dK or dV still NaN after the run: unwritten, or computed as NaN.
    pub nan_elements: usize,
    pub gradients: Vec<GradientCheck>,
    pub passed: bool,
}

impl BackwardCheck {
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = self
            .gradients
            .iter()
            .map(|g| {
                format!(
                    "{} max|err| {:.3e} (bound {:.3e}, {:.3e} for the same math in the dtype), rel fro {:.2e}, {} of {} rows",
                    g.name, g.max_abs, g.bound, g.lowp_max_abs, g.rel_fro, g.rows_checked, g.rows_total
                )
            })
            .collect();
        if self.nan_elements > 0 {
            parts.push(format!("{} NaN/unwritten elements", self.nan_elements));
        }
        parts.join("; ")
    }
}

/// The dK/dV rows to compare: all of them when their oracle is cheap (each row reads every
/// query row of its group), else a seeded sample that keeps the first and last keys.
pub fn kv_rows_to_check(p: &Problem, seed: u64) -> Vec<KvRowId> {
    let s = &p.shape;
    let total = s.batch * s.kv_heads * s.seqlen_k;
    let macs = total as u128 * (s.group_size() * s.seqlen_q * s.head_dim) as u128;
    let row_id = |flat: usize| KvRowId {
        batch: flat / (s.kv_heads * s.seqlen_k),
        kv_head: (flat / s.seqlen_k) % s.kv_heads,
        row: flat % s.seqlen_k,
    };
    if macs <= FULL_CHECK_MACS {
        return (0..total).map(row_id).collect();
    }
    // Sampled rows cost a whole group's queries each: fewer of them than the dQ rows.
    let per_row = (s.group_size() * s.seqlen_q * s.head_dim) as u128;
    let count = ((FULL_CHECK_MACS / per_row) as usize).clamp(8, SAMPLED_ROWS);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6b76);
    let mut flats = vec![0, s.seqlen_k - 1, total - s.seqlen_k, total - 1];
    flats.extend((0..count).map(|_| rng.random_range(0..total)));
    flats.sort_unstable();
    flats.dedup();
    flats.into_iter().map(row_id).collect()
}

/// The gradients of one run and what they are computed from, all as the kernel saw them:
/// 16-bit patterns of the problem's dtype, and the forward's LSE in fp32.
pub struct BackwardTensors<'a> {
    pub q: &'a [u16],
    pub k: &'a [u16],
    pub v: &'a [u16],
    pub o: &'a [u16],
    pub lse: &'a [f32],
    pub d_o: &'a [u16],
    pub dq: &'a [u16],
    pub dk: &'a [u16],
    pub dv: &'a [u16],
}

/// Checks a backward run's dQ, dK and dV against the oracle.
pub fn check_gradients(p: &Problem, seed: u64, t: &BackwardTensors) -> BackwardCheck {
    let dt = p.dtype;
    let widen =
        |bits: &[u16]| -> Vec<f64> { bits.iter().map(|&b| dt.from_bits(b) as f64).collect() };
    let nan_elements = [t.dq, t.dk, t.dv]
        .iter()
        .map(|g| g.iter().filter(|&&b| dt.from_bits(b).is_nan()).count())
        .sum();
    let (q, k, v, o, d_o) = (widen(t.q), widen(t.k), widen(t.v), widen(t.o), widen(t.d_o));
    let lse: Vec<f64> = t.lse.iter().map(|&x| x as f64).collect();
    let q_rows = rows_to_check(p, seed);
    let kv_rows = kv_rows_to_check(p, seed);
    let (shape, mask, scale) = (p.shape, p.mask(), p.softmax_scale() as f64);
    let grads = |precision| {
        reference::backward_rows(
            &q, &k, &v, &o, &lse, &d_o, &shape, &mask, scale, precision, &q_rows, &kv_rows,
        )
    };
    let exact = grads(Precision::F64);
    let lowp = grads(Precision::Emulated(dt.low_precision()));

    let d = shape.head_dim;
    let q_offset = |r: &RowId| shape.q_index(r.batch, r.row, r.head, 0);
    let kv_offset = |r: &KvRowId| shape.kv_index(r.batch, r.row, r.kv_head, 0);
    let q_starts: Vec<usize> = q_rows.iter().map(q_offset).collect();
    let kv_starts: Vec<usize> = kv_rows.iter().map(kv_offset).collect();
    let gradients = vec![
        gradient(
            "dQ",
            dt,
            t.dq,
            &q_starts,
            &exact.dq,
            &lowp.dq,
            d,
            shape.lse_len(),
        ),
        gradient(
            "dK",
            dt,
            t.dk,
            &kv_starts,
            &exact.dk,
            &lowp.dk,
            d,
            shape.kv_len() / d,
        ),
        gradient(
            "dV",
            dt,
            t.dv,
            &kv_starts,
            &exact.dv,
            &lowp.dv,
            d,
            shape.kv_len() / d,
        ),
    ];
    let passed = nan_elements == 0 && gradients.iter().all(|g| g.passed);
    BackwardCheck {
        nan_elements,
        gradients,
        passed,
    }
}

#[allow(clippy::too_many_arguments)]
fn gradient(
    name: &'static str,
    dtype: DType,
    kernel_bits: &[u16],
    starts: &[usize],
    exact: &[Vec<f64>],
    lowp: &[Vec<f64>],
    d: usize,
    rows_total: usize,
) -> GradientCheck {
    let kernel: Vec<f64> = starts
        .iter()
        .flat_map(|&s| {
            kernel_bits[s..s + d]
                .iter()
                .map(|&b| dtype.from_bits(b) as f64)
        })
        .collect();
    let exact: Vec<f64> = exact.concat();
    let lowp: Vec<f64> = lowp.concat();
    // ANCHOR: bound
    let stats = reference::error_stats(&kernel, &exact);
    let lowp_stats = reference::error_stats(&lowp, &exact);
    let atol = o_atol(dtype, &exact);
    let bound = reference::fa3_bound(lowp_stats.max_abs, atol);
    // ANCHOR_END: bound
    GradientCheck {
        name,
        rows_checked: starts.len(),
        rows_total,
        max_abs: stats.max_abs,
        rel_fro: stats.rel_fro,
        lowp_max_abs: lowp_stats.max_abs,
        atol,
        bound,
        // NaN compares false: a NaN gradient fails here as well as in the count.
        passed: stats.nan_count == 0 && stats.max_abs <= bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::HostInputs;

    /// The exact backward's answer, stored in the dtype, passes; a perturbed element, an
    /// unwritten one, or gradients of the wrong scale fail.
    #[test]
    fn the_bound_accepts_a_correct_answer_and_rejects_wrong_ones() {
        for dtype in DType::ALL {
            let mut p = Problem::new(1, 4, 40, 64);
            p.dtype = dtype;
            p.causal = true;
            p.shape.kv_heads = 2;
            p.shape.seqlen_k = 30; // more queries than keys: fully masked rows
            let inputs = HostInputs::generate(&p, 5);
            let d_o_bits = crate::inputs::normal_bits(p.shape.q_len(), dtype, 77);
            let f = |b: &[u16]| inputs.to_f64(b);
            let (q, k, v, d_o) = (f(&inputs.q), f(&inputs.k), f(&inputs.v), f(&d_o_bits));
            let scale = p.softmax_scale() as f64;
            let fwd = reference::attention(&q, &k, &v, &p.shape, &p.mask(), scale);
            let o_bits: Vec<u16> = fwd.o.iter().map(|&x| dtype.to_bits(x as f32)).collect();
            let lse: Vec<f32> = fwd.lse.iter().map(|&x| x as f32).collect();
            let o = f(&o_bits);
            let lse64: Vec<f64> = lse.iter().map(|&x| x as f64).collect();
            let g = reference::backward(&q, &k, &v, &o, &lse64, &d_o, &p.shape, &p.mask(), scale);
            let bits = |x: &[f64], factor: f64| -> Vec<u16> {
                x.iter()
                    .map(|&x| dtype.to_bits((x * factor) as f32))
                    .collect()
            };
            let (dq, dk, dv) = (bits(&g.dq, 1.0), bits(&g.dk, 1.0), bits(&g.dv, 1.0));
            let check = |dq: &[u16], dk: &[u16], dv: &[u16]| {
                let t = BackwardTensors {
                    q: &inputs.q,
                    k: &inputs.k,
                    v: &inputs.v,
                    o: &o_bits,
                    lse: &lse,
                    d_o: &d_o_bits,
                    dq,
                    dk,
                    dv,
                };
                check_gradients(&p, 5, &t)
            };
            let good = check(&dq, &dk, &dv);
            assert!(good.passed, "{dtype}: {}", good.summary());
            assert_eq!(good.gradients[0].rows_checked, 4 * 40);
            assert_eq!(good.gradients[1].rows_checked, 2 * 30);

            // One element of dK 0.5 off (its largest value is about 7 here, the bound about 0.07).
            let mut bad = dk.clone();
            bad[100] = dtype.to_bits(dtype.from_bits(bad[100]) + 0.5);
            let r = check(&dq, &bad, &dv);
            assert!(!r.passed, "{dtype}: a wrong dK passed: {}", r.summary());
            // One unwritten element of dV.
            let mut unwritten = dv.clone();
            unwritten[7] = dtype.to_bits(f32::NAN);
            let r = check(&dq, &dk, &unwritten);
            assert!(!r.passed && r.nan_elements == 1);
            // dQ without its softmax scale (the postprocess forgot it).
            assert!(!check(&bits(&g.dq, 1.0 / scale), &dk, &dv).passed);
            // dV twice (GQA's heads added twice).
            assert!(!check(&dq, &dk, &bits(&g.dv, 2.0)).passed);
        }
    }

    #[test]
    fn large_problems_sample_kv_rows_including_the_corners() {
        let p = Problem::new(1, 16, 8192, 128);
        let rows = kv_rows_to_check(&p, 3);
        assert!(rows.len() <= SAMPLED_ROWS + 4 && rows.len() >= 8);
        for (kv_head, row) in [(0, 0), (0, 8191), (15, 0), (15, 8191)] {
            assert!(rows.contains(&KvRowId {
                batch: 0,
                kv_head,
                row
            }));
        }
    }
}
