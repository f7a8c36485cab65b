//! Comparing a kernel's outputs with the `reference` oracle.
//!
//! Every element of O and LSE must have been written (they start as NaN). Then, for a set
//! of query rows (all rows of small problems, a seeded sample of large ones), O and LSE
//! are compared with the f64 oracle under FlashAttention-3's rule: the kernel's error may
//! be at most twice the error of the same math done in the kernel's dtype (the oracle's
//! bf16/f16 emulation) plus a small absolute term.

use crate::inputs::HostInputs;
use crate::{DType, Problem};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reference::{Precision, RowId};
use serde::Serialize;

/// The low-precision math a stage's kernels do, which the check emulates for its bound
/// ([`crate::PrefillStage::emulation`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emulation {
    /// The problem's dtype: inputs, S, P and O rounded as the oracle's bf16/f16 emulation does.
    Dtype,
    /// FP8 E4M3 by a recipe (`reference::fp8_attention`): the casts of Q, K, V and P.
    Fp8(reference::fp8_attention::Fp8Recipe),
}

/// Problems whose oracle costs at most this many multiply-adds are checked on every row.
pub const FULL_CHECK_MACS: u128 = 1 << 28;
/// Rows checked in larger problems (plus the first and last row of the first and last head).
pub const SAMPLED_ROWS: usize = 384;

/// The outcome of one check, with every number that decided it.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    pub rows_checked: usize,
    pub rows_total: usize,
    /// Elements of O or LSE still NaN after the run: unwritten, or computed as NaN.
    pub nan_elements: usize,
    pub o_max_abs: f64,
    pub o_max_rel: f64,
    pub o_rel_fro: f64,
    /// The error of the same math in the dtype (the oracle's emulation) against f64.
    pub o_lowp_max_abs: f64,
    pub o_atol: f64,
    pub o_bound: f64,
    pub lse_max_abs: f64,
    pub lse_lowp_max_abs: f64,
    pub lse_bound: f64,
    /// Rows where exactly one of kernel and oracle says "fully masked" (LSE = -inf).
    pub lse_mask_mismatches: usize,
    pub passed: bool,
}

impl CheckReport {
    pub fn summary(&self) -> String {
        format!(
            "max|dO| {:.3e} (bound {:.3e}, {:.3e} for the same math in the dtype), rel fro {:.2e}, max|dLSE| {:.2e} (bound {:.2e}), {} of {} rows{}",
            self.o_max_abs,
            self.o_bound,
            self.o_lowp_max_abs,
            self.o_rel_fro,
            self.lse_max_abs,
            self.lse_bound,
            self.rows_checked,
            self.rows_total,
            if self.nan_elements > 0 {
                format!(", {} NaN/unwritten elements", self.nan_elements)
            } else {
                String::new()
            }
        )
    }
}

/// Which rows to compare: all of them when the oracle is cheap, else a seeded sample that
/// always includes the corners (first and last rows are where masking and tails go wrong).
pub fn rows_to_check(p: &Problem, seed: u64) -> Vec<RowId> {
    let total = p.shape.batch * p.shape.heads * p.shape.seqlen_q;
    let macs = total as u128 * p.shape.seqlen_k as u128 * p.shape.head_dim as u128;
    let row_id = |flat: usize| RowId {
        batch: flat / (p.shape.heads * p.shape.seqlen_q),
        head: (flat / p.shape.seqlen_q) % p.shape.heads,
        row: flat % p.shape.seqlen_q,
    };
    if macs <= FULL_CHECK_MACS {
        return (0..total).map(row_id).collect();
    }
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let mut flats: Vec<usize> = vec![0, p.shape.seqlen_q - 1, total - p.shape.seqlen_q, total - 1];
    flats.extend((0..SAMPLED_ROWS).map(|_| rng.random_range(0..total)));
    flats.sort_unstable();
    flats.dedup();
    flats.into_iter().map(row_id).collect()
}

/// Checks a run's outputs (O as 16-bit patterns, LSE in fp32) against the oracle.
pub fn check_outputs(p: &Problem, inputs: &HostInputs, o_bits: &[u16], lse: &[f32]) -> CheckReport {
    check_outputs_emulating(p, inputs, o_bits, lse, Emulation::Dtype)
}

/// [`check_outputs`] with the bound from `emulation`'s error rather than the dtype's.
pub fn check_outputs_emulating(
    p: &Problem,
    inputs: &HostInputs,
    o_bits: &[u16],
    lse: &[f32],
    emulation: Emulation,
) -> CheckReport {
    let (q, k, v) = (
        inputs.to_f64(&inputs.q),
        inputs.to_f64(&inputs.k),
        inputs.to_f64(&inputs.v),
    );
    check_against(p, inputs.seed, &q, &k, &v, o_bits, lse, emulation)
}

/// [`check_outputs`] given Q, K and V already widened to f64 ([`HostInputs::to_f64`]), and
/// the inputs' seed, which picks the rows of a sampled check.
pub fn check_outputs_f64(
    p: &Problem,
    seed: u64,
    q: &[f64],
    k: &[f64],
    v: &[f64],
    o_bits: &[u16],
    lse: &[f32],
) -> CheckReport {
    check_against(p, seed, q, k, v, o_bits, lse, Emulation::Dtype)
}

#[allow(clippy::too_many_arguments)]
fn check_against(
    p: &Problem,
    seed: u64,
    q: &[f64],
    k: &[f64],
    v: &[f64],
    o_bits: &[u16],
    lse: &[f32],
    emulation: Emulation,
) -> CheckReport {
    let nan_elements = o_bits
        .iter()
        .filter(|&&b| p.dtype.from_bits(b).is_nan())
        .count()
        + lse.iter().filter(|x| x.is_nan()).count();

    let rows = rows_to_check(p, seed);
    let (shape, mask, scale) = (p.shape, p.mask(), p.softmax_scale() as f64);
    let exact = reference::attention_rows(q, k, v, &shape, &mask, scale, &rows, Precision::F64);
    // For FP8 also each row's LSE with S summed as the model of the tensor core's
    // accumulator sums it (fewer bits than f32), beside the exact sums', on the same casts.
    let (lowp, modelled_lse) = match emulation {
        Emulation::Dtype => (
            reference::attention_rows(
                q,
                k,
                v,
                &shape,
                &mask,
                scale,
                &rows,
                Precision::Emulated(p.dtype.low_precision()),
            ),
            None,
        ),
        Emulation::Fp8(recipe) => {
            let (lowp, lse) = reference::fp8_attention::attention_fp8_rows_and_accumulated_lse(
                q,
                k,
                v,
                &shape,
                &mask,
                scale,
                recipe,
                &rows,
                reference::fp8_attention::TENSOR_CORE_BITS,
            );
            (lowp, Some(lse))
        }
    };

    let d = p.shape.head_dim;
    let mut kernel_o = Vec::with_capacity(rows.len() * d);
    let mut exact_o = Vec::with_capacity(rows.len() * d);
    let mut lowp_o = Vec::with_capacity(rows.len() * d);
    let (mut lse_err, mut lse_lowp_err, mut lse_lowp_spread, mut lse_mask_mismatches) =
        (0.0f64, 0.0f64, 0.0f64, 0usize);
    for (n, ((row, ex), lo)) in rows.iter().zip(&exact).zip(&lowp).enumerate() {
        let base = ((row.batch * p.shape.seqlen_q + row.row) * p.shape.heads + row.head) * d;
        kernel_o.extend(
            o_bits[base..base + d]
                .iter()
                .map(|&b| p.dtype.from_bits(b) as f64),
        );
        exact_o.extend_from_slice(&ex.o);
        lowp_o.extend_from_slice(&lo.o);
        let kernel_lse =
            lse[(row.batch * p.shape.heads + row.head) * p.shape.seqlen_q + row.row] as f64;
        match (ex.lse == f64::NEG_INFINITY, kernel_lse == f64::NEG_INFINITY) {
            (true, true) => {}
            (false, false) => {
                // NaN-propagating max: a NaN LSE must fail, not vanish.
                lse_err = nan_max(lse_err, (kernel_lse - ex.lse).abs());
                if lo.lse.is_finite() {
                    lse_lowp_err = lse_lowp_err.max((lo.lse - ex.lse).abs());
                    lse_lowp_spread = lse_lowp_spread.max(lo.lse_spread);
                }
                if let Some(m) = modelled_lse
                    .as_ref()
                    .map(|m| m[n])
                    .filter(|m| m.is_finite())
                {
                    lse_lowp_err = lse_lowp_err.max((m - ex.lse).abs());
                }
            }
            _ => lse_mask_mismatches += 1,
        }
    }

    // ANCHOR: bound
    let stats = reference::error_stats(&kernel_o, &exact_o);
    let lowp_stats = reference::error_stats(&lowp_o, &exact_o);
    let o_atol = o_atol(p.dtype, &exact_o);
    let o_bound = reference::fa3_bound(lowp_stats.max_abs, o_atol);
    // LSE: the same rule, on the larger of the error the dtype's math made and its typical
    // size (`lse_spread`): the first is a sum of weighted rounding errors that can cancel
    // by luck, and on a problem of two rows that luck failed 1 in 10 correct runs of
    // stage 5. For FP8 the dtype's math is also taken with S summed as the model of the
    // tensor core's accumulator sums it, whichever errs more: the accumulator keeps fewer
    // bits than exact sums, and a kernel is held to the math it does. LSE is kept in fp32
    // by every stage:
    // its absolute term is a few fp32 ulps.
    let lse_bound = reference::fa3_bound(lse_lowp_err.max(lse_lowp_spread), 1e-5);
    // ANCHOR_END: bound
    let passed = nan_elements == 0
        && lse_mask_mismatches == 0
        && stats.max_abs <= o_bound
        && lse_err <= lse_bound;
    CheckReport {
        rows_checked: rows.len(),
        rows_total: p.shape.batch * p.shape.heads * p.shape.seqlen_q,
        nan_elements,
        o_max_abs: stats.max_abs,
        o_max_rel: stats.max_rel,
        o_rel_fro: stats.rel_fro,
        o_lowp_max_abs: lowp_stats.max_abs,
        o_atol,
        o_bound,
        lse_max_abs: lse_err,
        lse_lowp_max_abs: lse_lowp_err,
        lse_bound,
        lse_mask_mismatches,
        passed,
    }
}

/// The absolute term of the bound: the rounding of the largest output to the dtype
/// (one unit roundoff of max|O|), which even an exact kernel pays when it stores O.
pub fn o_atol(dtype: DType, exact_o: &[f64]) -> f64 {
    let max = exact_o.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    dtype.low_precision().unit_roundoff() * max.max(1.0)
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_problems_check_every_row() {
        let p = Problem::new(2, 3, 100, 64);
        let rows = rows_to_check(&p, 1);
        assert_eq!(rows.len(), 600);
        assert_eq!(
            rows[599],
            RowId {
                batch: 1,
                head: 2,
                row: 99
            }
        );
    }

    #[test]
    fn large_problems_sample_rows_including_the_corners() {
        let p = Problem::new(1, 16, 8192, 128);
        let rows = rows_to_check(&p, 1);
        assert!(rows.len() <= SAMPLED_ROWS + 4 && rows.len() > SAMPLED_ROWS / 2);
        assert!(rows.contains(&RowId {
            batch: 0,
            head: 0,
            row: 0
        }));
        assert!(rows.contains(&RowId {
            batch: 0,
            head: 15,
            row: 8191
        }));
        assert!(rows.contains(&RowId {
            batch: 0,
            head: 0,
            row: 8191
        }));
    }

    /// The oracle's own answer, stored in the dtype, must pass; a perturbed one must not;
    /// an unwritten element must not.
    #[test]
    fn tolerance_accepts_a_correct_answer_and_rejects_wrong_ones() {
        for dtype in DType::ALL {
            let mut p = Problem::new(1, 2, 33, 64);
            p.dtype = dtype;
            p.causal = true;
            p.shape.seqlen_k = 20; // more queries than keys: the first 13 rows are fully masked
            let inputs = HostInputs::generate(&p, 3);
            let (q, k, v) = (
                inputs.to_f64(&inputs.q),
                inputs.to_f64(&inputs.k),
                inputs.to_f64(&inputs.v),
            );
            let exact =
                reference::attention(&q, &k, &v, &p.shape, &p.mask(), p.softmax_scale() as f64);
            let o_bits: Vec<u16> = exact.o.iter().map(|&x| dtype.to_bits(x as f32)).collect();
            let lse: Vec<f32> = exact.lse.iter().map(|&x| x as f32).collect();
            let good = check_outputs(&p, &inputs, &o_bits, &lse);
            assert!(good.passed, "{dtype}: {}", good.summary());
            assert_eq!(good.lse_mask_mismatches, 0);

            // A wrong value in one element, 0.05 off, must fail.
            let mut bad = o_bits.clone();
            let x = dtype.from_bits(bad[700]);
            bad[700] = dtype.to_bits(x + 0.05);
            assert!(
                !check_outputs(&p, &inputs, &bad, &lse).passed,
                "{dtype}: 0.05 error passed"
            );

            // One unwritten element of O must fail.
            let mut unwritten = o_bits.clone();
            unwritten[5] = dtype.to_bits(f32::NAN);
            let r = check_outputs(&p, &inputs, &unwritten, &lse);
            assert!(!r.passed && r.nan_elements == 1);

            // A fully masked row reported as seeing keys must fail.
            let mut lse_bad = lse.clone();
            lse_bad[0] = 0.0;
            assert_eq!(
                check_outputs(&p, &inputs, &o_bits, &lse_bad).lse_mask_mismatches,
                1
            );
        }
    }
    /// The FP8 stages' bound: the emulation's own answer (every cast of the recipe, nothing
    /// else rounded) passes, as a kernel doing that math must; the same answer fails the bf16
    /// bound, so FP8's error is not let through a 16-bit stage; and an answer whose V scale
    /// is 10% off fails the FP8 bound. (2% off passes: FP8's own largest error on the first
    /// of these problems is 0.056, and the bound twice that.)
    #[test]
    fn fp8_bound_accepts_the_recipe_and_rejects_a_wrong_scale() {
        use reference::fp8_attention::{Fp8Recipe, Granularity, attention_fp8};
        for (causal, incoherent) in [(false, None), (true, Some(7))] {
            let mut p = Problem::new(1, 2, 70, 128);
            p.shape.seqlen_k = 150;
            p.causal = causal;
            let inputs = HostInputs::generate(&p, 5);
            let (q, k, v) = (
                inputs.to_f64(&inputs.q),
                inputs.to_f64(&inputs.k),
                inputs.to_f64(&inputs.v),
            );
            let recipe = Fp8Recipe {
                granularity: Granularity::PerHead,
                incoherent,
            };
            let scale = p.softmax_scale() as f64;
            let emu = attention_fp8(&q, &k, &v, &p.shape, &p.mask(), scale, recipe);
            let bits = |f: f64| -> Vec<u16> {
                emu.o
                    .iter()
                    .map(|&x| p.dtype.to_bits((x * f) as f32))
                    .collect()
            };
            let lse: Vec<f32> = emu.lse.iter().map(|&x| x as f32).collect();
            let fp8 = Emulation::Fp8(recipe);
            let good = check_outputs_emulating(&p, &inputs, &bits(1.0), &lse, fp8);
            assert!(good.passed, "{}", good.summary());
            let as_bf16 = check_outputs(&p, &inputs, &bits(1.0), &lse);
            assert!(
                !as_bf16.passed,
                "FP8's answer passed as bf16: {}",
                as_bf16.summary()
            );
            let off = check_outputs_emulating(&p, &inputs, &bits(1.1), &lse, fp8);
            assert!(!off.passed, "V's scale 10% off passed: {}", off.summary());
        }
    }

    /// Seeded inputs of `p`, Q and K widened, and the FP8 emulation of `recipe` with its O
    /// in the dtype's bits: a stand-in for an FP8 kernel's output.
    struct Fp8Emulated {
        inputs: HostInputs,
        q: Vec<f64>,
        k: Vec<f64>,
        emu: reference::Attention,
        o: Vec<u16>,
    }
    fn fp8_emulated(
        p: &Problem,
        seed: u64,
        recipe: reference::fp8_attention::Fp8Recipe,
    ) -> Fp8Emulated {
        let inputs = HostInputs::generate(p, seed);
        let (q, k, v) = (
            inputs.to_f64(&inputs.q),
            inputs.to_f64(&inputs.k),
            inputs.to_f64(&inputs.v),
        );
        let scale = p.softmax_scale() as f64;
        let emu =
            reference::fp8_attention::attention_fp8(&q, &k, &v, &p.shape, &p.mask(), scale, recipe);
        let o = emu.o.iter().map(|&x| p.dtype.to_bits(x as f32)).collect();
        Fp8Emulated {
            inputs,
            q,
            k,
            emu,
            o,
        }
    }

    /// One query and one key: the LSE is the quantized score itself, and the casts may err
    /// on it by little, by luck, while the kernel's QGMMA adds its own error (1.03e-2 on the
    /// H200 at head dim 128, against a bound of 8.2e-3 from that luck). The bound uses the
    /// casts' typical error instead (`lse_spread`): an LSE 2e-2 off passes for every seed,
    /// one 0.5 off fails.
    #[test]
    fn fp8_lse_bound_of_one_key_is_the_casts_typical_error() {
        use reference::fp8_attention::{Fp8Recipe, Granularity};
        let p = Problem::new(1, 1, 1, 128);
        let recipe = Fp8Recipe {
            granularity: Granularity::PerHead,
            incoherent: None,
        };
        let mut smallest = f64::INFINITY;
        for seed in 0..200 {
            let Fp8Emulated { inputs, emu, o, .. } = fp8_emulated(&p, seed, recipe);
            let lse = |off: f64| vec![(emu.lse[0] + off) as f32];
            let fp8 = Emulation::Fp8(recipe);
            let near = check_outputs_emulating(&p, &inputs, &o, &lse(2e-2), fp8);
            assert!(near.passed, "seed {seed}: {}", near.summary());
            smallest = smallest.min(near.lse_bound);
            let far = check_outputs_emulating(&p, &inputs, &o, &lse(0.5), fp8);
            assert!(!far.passed, "seed {seed}: {}", far.summary());
        }
        println!("smallest LSE bound over 200 seeds: {smallest:.2e}");
    }

    /// FP8 at d256 with one scale per tensor: a row of one query against 257 keys (causal,
    /// the grid's shape) whose LSE comes from S summed in an accumulator one bit shorter
    /// than the check's model (13 bits) passes, for the seed here (the one of
    /// `bench/experiments/2026-12-02-fp8-d256-lse/`) and others; an LSE 0.2 off does not.
    /// The grid's causal shape of one query row against 257 keys, two heads, at head dim
    /// `d`, with one FP8 scale per tensor.
    fn one_query_per_tensor(d: usize) -> (Problem, reference::fp8_attention::Fp8Recipe) {
        use reference::fp8_attention::{Fp8Recipe, Granularity};
        let mut p = Problem::new(1, 2, 257, d);
        p.shape.seqlen_q = 1;
        p.causal = true;
        let recipe = Fp8Recipe {
            granularity: Granularity::PerTensor,
            incoherent: None,
        };
        (p, recipe)
    }

    #[test]
    fn fp8_lse_bound_covers_the_tensor_cores_sums_of_s() {
        use reference::fp8_attention::lse_fp8_rows_accumulated;
        let (p, recipe) = one_query_per_tensor(256);
        let fp8 = Emulation::Fp8(recipe);
        for seed in [10938290962580418363u64, 0, 1, 2, 3, 4, 5] {
            let Fp8Emulated {
                inputs,
                q,
                k,
                emu,
                o,
            } = fp8_emulated(&p, seed, recipe);
            let scale = p.softmax_scale() as f64;
            let rows = reference::oracle::all_rows(&p.shape);
            let lse13: Vec<f32> =
                lse_fp8_rows_accumulated(&q, &k, &p.shape, &p.mask(), scale, recipe, &rows, 13)
                    .iter()
                    .map(|&x| x as f32)
                    .collect();
            let like_the_kernel = check_outputs_emulating(&p, &inputs, &o, &lse13, fp8);
            assert!(
                like_the_kernel.passed,
                "seed {seed}: {}",
                like_the_kernel.summary()
            );
            let off: Vec<f32> = emu.lse.iter().map(|&x| (x + 0.2) as f32).collect();
            let far = check_outputs_emulating(&p, &inputs, &o, &off, fp8);
            assert!(!far.passed, "seed {seed}: {}", far.summary());
        }
    }

    /// FP8 with one scale per tensor at d64, one query row against 257 keys (the grid's
    /// causal shape): with this seed three of Q's 128 values land exactly between two E4M3
    /// codes in exact arithmetic, and stage 20 on an H200 gave the second row an LSE 3.43e-2
    /// off the exact one (`bench/records/h200-checks/2026-12-03-all-gpu-tests/`), outside
    /// the bound of an emulation that rounded those ties to even (2.55e-2). The kernel's
    /// quantization computes in f32 and lands off the ties (`fake_quantize_bshd`): emulated
    /// so, the same math errs by as much there itself, the kernel's LSE passes, and one 0.2
    /// off does not.
    #[test]
    fn fp8_lse_bound_holds_where_q_lands_on_a_tie() {
        let (p, recipe) = one_query_per_tensor(64);
        let Fp8Emulated {
            inputs,
            q,
            k,
            emu,
            o,
        } = fp8_emulated(&p, 15877803243449587777, recipe);
        let v = inputs.to_f64(&inputs.v);
        let exact = reference::attention(&q, &k, &v, &p.shape, &p.mask(), p.softmax_scale() as f64);
        let emulated_error = emu.lse[1] - exact.lse[1];
        assert!(
            emulated_error > 3.4e-2,
            "the emulation errs by {emulated_error:.3e} on row 1"
        );
        let fp8 = Emulation::Fp8(recipe);
        let measured: Vec<f32> = vec![emu.lse[0] as f32, (exact.lse[1] + 3.43e-2) as f32];
        let r = check_outputs_emulating(&p, &inputs, &o, &measured, fp8);
        assert!(r.passed, "{}", r.summary());
        let off: Vec<f32> = vec![emu.lse[0] as f32, (exact.lse[1] + 0.2) as f32];
        assert!(!check_outputs_emulating(&p, &inputs, &o, &off, fp8).passed);
    }

    /// An LSE like a tensor-core kernel's (exact scores, each P rounded to the dtype before
    /// the row sum, against a max up to 8 below the true one as the lazy rescale leaves it)
    /// passes on the grid's smallest multi-key shape for every seed tried, and an LSE off by
    /// a few of the dtype's roundings does not. With the bound on the error the dtype's
    /// math happened to make, such an LSE failed on 2 of 20 GPU runs (one seed is below,
    /// found with the Box-Muller sampler since replaced: its inputs are not those now).
    #[test]
    fn lse_bound_holds_for_p_rounded_before_the_sum() {
        for dtype in DType::ALL {
            let mut p = Problem::new(1, 2, 1, 64);
            p.shape.seqlen_k = 257;
            p.dtype = dtype;
            let (mut bounds, mut worst) = (Vec::new(), 0.0f64);
            for seed in (0..150).chain([6263271776910810519]) {
                let inputs = HostInputs::generate(&p, seed);
                let (q, k, v) = (
                    inputs.to_f64(&inputs.q),
                    inputs.to_f64(&inputs.k),
                    inputs.to_f64(&inputs.v),
                );
                let scale = p.softmax_scale() as f64;
                let exact = reference::attention(&q, &k, &v, &p.shape, &p.mask(), scale);
                let o_bits: Vec<u16> = exact.o.iter().map(|&x| dtype.to_bits(x as f32)).collect();
                let lse: Vec<f32> = (0..p.shape.heads)
                    .map(|h| {
                        // batch 1, one query row: Q's row h and K's rows (j, h) in BSHD.
                        let d = p.shape.head_dim;
                        let qh = &q[h * d..(h + 1) * d];
                        let scores: Vec<f64> = (0..p.shape.seqlen_k)
                            .map(|j| {
                                let kj = &k[(j * p.shape.kv_heads + h) * d
                                    ..(j * p.shape.kv_heads + h + 1) * d];
                                qh.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>() * scale
                            })
                            .collect();
                        let base = scores.iter().cloned().fold(f64::MIN, f64::max)
                            - (seed % 9) as f64 * 0.6;
                        let sum: f64 = scores
                            .iter()
                            .map(|s| dtype.from_bits(dtype.to_bits((s - base).exp() as f32)) as f64)
                            .sum();
                        (base + sum.ln()) as f32
                    })
                    .collect();
                let r = check_outputs(&p, &inputs, &o_bits, &lse);
                assert!(r.passed, "{dtype} seed {seed}: {}", r.summary());
                assert!(r.lse_mask_mismatches == 0);
                let step = if dtype == DType::Bf16 { 1e-2 } else { 2e-3 };
                let off: Vec<f32> = lse.iter().map(|x| x + step).collect();
                assert!(
                    !check_outputs(&p, &inputs, &o_bits, &off).passed,
                    "{dtype} seed {seed}: LSE {step} off passed: {}",
                    check_outputs(&p, &inputs, &o_bits, &off).summary()
                );
                bounds.push(r.lse_bound);
                worst = worst.max(r.lse_max_abs / r.lse_bound);
            }
            bounds.sort_by(f64::total_cmp);
            println!(
                "{dtype}: LSE bound min {:.2e} median {:.2e} max {:.2e}; largest error / bound {worst:.2}",
                bounds[0],
                bounds[bounds.len() / 2],
                bounds[bounds.len() - 1]
            );
        }
    }
}
