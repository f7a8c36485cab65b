//! FP8 attention in emulation (`reference::fp8_attention`): the rotation, the scales, the
//! cast of P, and what incoherent processing does to outliers.

use proptest::prelude::*;
use reference::fp8::{Fp8Format, fake_quantize};
use reference::fp8_attention::{
    Accumulator, Fp8Recipe, Granularity, P_SCALE, aligned_sum, attention_fp8,
    attention_fp8_rows_accumulated, fake_quantize_bshd, random_signs, rotate_rows,
};
use reference::oracle::{RowId, attention_rows};
use reference::{Mask, Shape, attention};

/// Deterministic normal samples (SplitMix64 and Box-Muller): the tests need fixed inputs.
fn normals(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (u1, u2) = (next().max(1e-300), next());
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        })
        .collect()
}

/// FlashAttention-3's outlier inputs: N(0, 1), with every 1000th entry N(0, 10²).
fn with_outliers(mut x: Vec<f64>) -> Vec<f64> {
    for v in x.iter_mut().step_by(1000) {
        *v *= 10.0;
    }
    x
}

fn rmse(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>() / a.len() as f64).sqrt()
}

proptest! {
    #[test]
    fn rotation_leaves_scores_unchanged(
        log_d in 2usize..8,
        seed in any::<u64>(),
        data in prop::collection::vec(-100.0f64..100.0, 2 * 128),
    ) {
        let d = 1 << log_d;
        let (mut q, mut k) = (data[..d].to_vec(), data[128..128 + d].to_vec());
        let before: f64 = q.iter().zip(&k).map(|(a, b)| a * b).sum();
        let signs = random_signs(d, seed);
        rotate_rows(&mut q, &signs);
        rotate_rows(&mut k, &signs);
        let after: f64 = q.iter().zip(&k).map(|(a, b)| a * b).sum();
        prop_assert!((before - after).abs() <= 1e-9 * (1.0 + before.abs()), "{before} vs {after}");
    }
}

#[test]
fn per_tensor_scales_are_the_fp8_modules_in_f32() {
    // The FP8 module quantizes in f64; the kernels' emulation takes its scale and codes in
    // f32, which moves a value by the f32 rounding of its scale (and a code only where the
    // exact quotient lies within that of a tie, which these continuous values never do).
    let x = normals(2 * 7 * 3 * 16, 1);
    let ours = fake_quantize_bshd(&x, 2, 7, 3, 16, Granularity::PerTensor);
    for (a, b) in ours.iter().zip(fake_quantize(&x, Fp8Format::E4M3)) {
        assert!((a - b).abs() <= 1e-7 * b.abs(), "{a} against {b}");
    }
}

#[test]
fn a_tie_rounds_as_the_kernels_f32_product_does() {
    // 1.21875 x 448 / 3.25 is exactly 168, the tie between the codes 160 and 176, which
    // exact arithmetic rounds to even; the quantization kernel's f32 product
    // 1.21875 x (1 / (3.25 / 448)) lands just above it, on 176 (a bf16 input of stage 20's
    // tests did this to three values of Q: bench/records/h200-checks/2026-12-03-all-gpu-tests).
    assert_eq!(Fp8Format::E4M3.round(168.0), 160.0);
    let x = [1.21875, 3.25, -1.21875, 0.0];
    let q = fake_quantize_bshd(&x, 1, 1, 1, 4, Granularity::PerTensor);
    let descale = f64::from(3.25f32 / 448.0);
    assert_eq!(q[0], 176.0 * descale);
    assert_eq!(q[2], -176.0 * descale);
    assert_eq!(q[1], 448.0 * descale);
}

#[test]
fn a_block_scale_sees_only_its_block() {
    // One huge value in block 0 of head 0 must not coarsen block 1 or head 1.
    let (b, s, h, d) = (1, 8, 2, 4);
    let mut x = vec![0.3; b * s * h * d];
    x[0] = 1000.0;
    let q = fake_quantize_bshd(&x, b, s, h, d, Granularity::PerBlock { rows: 4 });
    let descale = 0.3f32 / 448.0; // in f32, as the kernels take it
    let same_scale =
        Fp8Format::E4M3.round(f64::from(0.3f32 * (1.0 / descale))) * f64::from(descale);
    // Position 4 (block 1) of head 0, and position 0 of head 1.
    assert_eq!(q[(4 * h) * d], same_scale);
    assert_eq!(q[d], same_scale);
    // In block 0 of head 0, 0.3 is far below the scale 1000 / 448 and rounds coarsely.
    assert!((q[1] - 0.3).abs() > 1e-3, "{}", q[1]);
}

#[test]
fn with_inputs_on_the_grid_only_p_and_o_round() {
    // Values on the E4M3 grid with amax 448 (scale 1) quantize exactly, so the error left is
    // P's cast (relative 2^-4 at most, below P's smallest normal an absolute 2^-10 / 2^8) and
    // O's bf16 (relative 2^-8).
    let shape = Shape::new(1, 2, 2, 16, 40, 8);
    let grid = |x: f64| Fp8Format::E4M3.round(x);
    let mut q: Vec<f64> = normals(shape.q_len(), 2)
        .into_iter()
        .map(|x| grid(x * 0.5))
        .collect();
    let mut k: Vec<f64> = normals(shape.kv_len(), 3)
        .into_iter()
        .map(|x| grid(x * 0.5))
        .collect();
    let mut v: Vec<f64> = normals(shape.kv_len(), 4).into_iter().map(grid).collect();
    q[0] = 448.0;
    k[0] = 448.0;
    v[0] = 448.0;
    // The largest score is then q[0] k[0] scale: keep it moderate with the scale.
    let scale = 1.0 / 2048.0;
    for x in [&q, &k, &v] {
        assert_eq!(
            fake_quantize(x, Fp8Format::E4M3),
            *x,
            "inputs on the grid, amax 448"
        );
    }
    let (q, k, v) = (
        std::mem::take(&mut q),
        std::mem::take(&mut k),
        std::mem::take(&mut v),
    );
    let recipe = Fp8Recipe {
        granularity: Granularity::PerTensor,
        incoherent: None,
    };
    let fp8 = attention_fp8(&q, &k, &v, &shape, &Mask::None, scale, recipe);
    let exact = attention(&q, &k, &v, &shape, &Mask::None, scale);
    let d = shape.head_dim;
    for row in 0..shape.seqlen_q * shape.heads {
        let (b, i, h) = (0, row / shape.heads, row % shape.heads);
        let start = shape.q_index(b, i, h, 0);
        let hk = shape.kv_head(h);
        let qi = &q[start..start + d];
        let scores: Vec<f64> = (0..shape.seqlen_k)
            .map(|j| {
                scale
                    * qi.iter()
                        .zip(&k[shape.kv_index(b, j, hk, 0)..][..d])
                        .map(|(a, b)| a * b)
                        .sum::<f64>()
            })
            .collect();
        let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let l: f64 = scores.iter().map(|s| (s - m).exp()).sum();
        for dd in 0..d {
            // Σ_j |ΔP_j| |v_jd| / l with |ΔP_j| <= 2^-4 P_j + 2^-10 / 2^8.
            let bound: f64 = (0..shape.seqlen_k)
                .map(|j| {
                    let p = (scores[j] - m).exp();
                    (p / 16.0 + 2f64.powi(-10) / P_SCALE) * v[shape.kv_index(b, j, hk, dd)].abs()
                })
                .sum::<f64>()
                / l
                + exact.o[start + dd].abs() / 256.0;
            let err = (fp8.o[start + dd] - exact.o[start + dd]).abs();
            assert!(
                err <= bound * (1.0 + 1e-9),
                "row {row} d {dd}: error {err} over bound {bound}"
            );
        }
    }
}

#[test]
fn incoherent_processing_lowers_the_error_on_outliers_in_q_and_k() {
    // The rotation acts on Q and K only (V is not rotated), so the outliers are in Q and K.
    // What it can remove is the error of Q's and K's casts; V's and P's remain (about
    // 1.3e-2 here), so the RMSE falls by a quarter, not by FlashAttention-3's 2.6x.
    let shape = Shape::new(1, 2, 2, 256, 256, 64);
    let q = with_outliers(normals(shape.q_len(), 10));
    let k = with_outliers(normals(shape.kv_len(), 11));
    let v = normals(shape.kv_len(), 12);
    let scale = 1.0 / 8.0;
    let exact = attention(&q, &k, &v, &shape, &Mask::None, scale);
    let error = |incoherent| {
        let recipe = Fp8Recipe {
            granularity: Granularity::PerTensor,
            incoherent,
        };
        rmse(
            &attention_fp8(&q, &k, &v, &shape, &Mask::None, scale, recipe).o,
            &exact.o,
        )
    };
    let (plain, rotated) = (error(None), error(Some(7)));
    eprintln!("RMSE {rotated:.3e} with the rotation, {plain:.3e} without");
    assert!(
        rotated < 0.8 * plain,
        "RMSE {rotated:.3e} with the rotation against {plain:.3e} without"
    );
}

#[test]
fn fully_masked_rows_give_zero() {
    // Causal with more queries than keys (bottom-right aligned): the first rows see no key.
    let shape = Shape::new(1, 1, 1, 6, 3, 4);
    let q = normals(shape.q_len(), 20);
    let k = normals(shape.kv_len(), 21);
    let v = normals(shape.kv_len(), 22);
    let recipe = Fp8Recipe {
        granularity: Granularity::PerHead,
        incoherent: Some(3),
    };
    let fp8 = attention_fp8(&q, &k, &v, &shape, &Mask::causal(), 0.5, recipe);
    let exact = attention(&q, &k, &v, &shape, &Mask::causal(), 0.5);
    for i in 0..shape.seqlen_q {
        let lse = exact.lse[shape.lse_index(0, 0, i)];
        let o = &fp8.o[shape.q_index(0, i, 0, 0)..][..4];
        if lse == f64::NEG_INFINITY {
            assert!(o.iter().all(|&x| x == 0.0), "row {i}: {o:?}");
            assert_eq!(fp8.lse[shape.lse_index(0, 0, i)], f64::NEG_INFINITY);
        } else {
            assert!(o.iter().all(|x| x.is_finite()), "row {i}: {o:?}");
        }
    }
}

/// The accumulator model's one step, by hand: terms aligned to the largest exponent, each
/// cut towards zero below the kept significant bits, then added exactly.
#[test]
fn aligned_sum_by_hand() {
    // 1.5 = 1.1b: 2 significant bits at exponent 0 keep multiples of 0.5.
    assert_eq!(aligned_sum(&[1.5, 0.75], 2), 1.5 + 0.5);
    assert_eq!(aligned_sum(&[1.5, -0.75], 2), 1.5 - 0.5);
    // 14 bits at exponent 0 keep multiples of 2^-13: 2^-14 is dropped, 2^-13 is kept.
    assert_eq!(aligned_sum(&[1.0, 2f64.powi(-14)], 14), 1.0);
    assert_eq!(
        aligned_sum(&[1.0, 2f64.powi(-13)], 14),
        1.0 + 2f64.powi(-13)
    );
    // The largest term sets the exponent whatever its place; zeros add nothing.
    assert_eq!(aligned_sum(&[0.0, 3.0e-5, 1024.0], 14), 1024.0);
    assert_eq!(aligned_sum(&[0.0, 0.0], 14), 0.0);
    // 40 bits keep every term of this sum exactly (multiples of 2^-3 at exponent 10).
    let terms = [0.125, 0.25, 0.375, 1024.0];
    assert_eq!(aligned_sum(&terms, 40), terms.iter().sum::<f64>());
}

/// O's relative error (Frobenius) over `rows` for one way of summing P V, inputs of the
/// given mean.
fn accumulated_error(seqlen: usize, mean: f64, accumulator: Option<Accumulator>) -> f64 {
    let d = 32;
    let shape = Shape::new(1, 1, 1, seqlen, seqlen, d);
    let shifted = |seed| -> Vec<f64> {
        normals(seqlen * d, seed)
            .into_iter()
            .map(|x| x + mean)
            .collect()
    };
    let (q, k, v) = (shifted(1), shifted(2), shifted(3));
    let rows: Vec<RowId> = (0..8)
        .map(|i| RowId {
            batch: 0,
            head: 0,
            row: (2 * i + 1) * seqlen / 16,
        })
        .collect();
    let scale = 1.0 / (d as f64).sqrt();
    let recipe = Fp8Recipe {
        granularity: Granularity::PerHead,
        incoherent: None,
    };
    let exact: Vec<f64> = attention_rows(
        &q,
        &k,
        &v,
        &shape,
        &Mask::None,
        scale,
        &rows,
        reference::Precision::F64,
    )
    .into_iter()
    .flat_map(|r| r.o)
    .collect();
    let o: Vec<f64> = attention_fp8_rows_accumulated(
        &q,
        &k,
        &v,
        &shape,
        &Mask::None,
        scale,
        recipe,
        &rows,
        accumulator,
    )
    .into_iter()
    .flat_map(|r| r.o)
    .collect();
    let diff: f64 = o.iter().zip(&exact).map(|(a, b)| (a - b).powi(2)).sum();
    (diff / exact.iter().map(|b| b * b).sum::<f64>()).sqrt()
}

/// Stage 20's finding, on the CPU (book: "Stage 20: FP8", "The accumulator's precision"):
/// with inputs of mean 0.5, one 14-bit accumulator over all the keys errs in proportion to
/// the keys, while a fresh one every 128 keys, added into an exact O, errs as the casts do.
/// With zero-mean inputs the dropped bits have both signs and cancel.
#[test]
fn a_short_accumulator_errs_with_the_keys_unless_folded() {
    let one = |bits| {
        Some(Accumulator {
            bits,
            fold_keys: None,
            center_v: false,
        })
    };
    let folded = Some(Accumulator {
        bits: 14,
        fold_keys: Some(128),
        center_v: false,
    });
    // 40 bits: the model's sum is the exact one.
    let (exact, wide) = (
        accumulated_error(1024, 0.5, None),
        accumulated_error(1024, 0.5, one(40)),
    );
    assert!(
        (wide - exact).abs() < 1e-9 * exact,
        "{wide} against {exact}"
    );
    let (short, long) = (
        accumulated_error(1024, 0.5, one(14)),
        accumulated_error(4096, 0.5, one(14)),
    );
    assert!(
        long > 2.0 * short,
        "4096 keys {long:.3e}, 1024 keys {short:.3e}"
    );
    let (cast, fold) = (
        accumulated_error(4096, 0.5, None),
        accumulated_error(4096, 0.5, folded),
    );
    assert!(
        long > 3.0 * fold && fold < 1.5 * cast,
        "one {long:.3e}, folded {fold:.3e}, casts {cast:.3e}"
    );
    let (cast0, one0) = (
        accumulated_error(4096, 0.0, None),
        accumulated_error(4096, 0.0, one(14)),
    );
    assert!(
        one0 < 1.5 * cast0,
        "zero-mean: one {one0:.3e}, casts {cast0:.3e}"
    );
}
