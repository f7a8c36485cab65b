//! Properties of the low-precision emulation: bf16/f16 rounding, FP8 quantization, the
//! Walsh–Hadamard transform, and the error metrics that judge the results.

mod common;

use common::{check_close, problem_with, shape, values};
use proptest::prelude::*;
use reference::error::{Tolerance, error_stats};
use reference::hadamard::{hadamard_rows, hadamard_transform};
use reference::{Fp8Format, Fp8Tensor, LowPrecision, Shape, attention};

fn low_precision() -> impl Strategy<Value = LowPrecision> {
    prop_oneof![Just(LowPrecision::Bf16), Just(LowPrecision::F16)]
}

fn fp8_format() -> impl Strategy<Value = Fp8Format> {
    prop_oneof![Just(Fp8Format::E4M3), Just(Fp8Format::E5M2)]
}

/// A length that is a power of two from 1 to 256.
fn power_of_two() -> impl Strategy<Value = usize> {
    (0u32..=8).prop_map(|e| 1usize << e)
}

proptest! {
    #[test]
    fn rounding_is_idempotent_and_monotone(p in low_precision(), a in -7e4f64..7e4, b in -7e4f64..7e4) {
        prop_assert_eq!(p.round(p.round(a)), p.round(a));
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(p.round(lo) <= p.round(hi));
    }

    #[test]
    fn rounding_error_is_within_unit_roundoff(p in low_precision(), mantissa in 1.0f64..2.0, exponent in -14i32..15) {
        // Normal range of both formats: one rounding moves x by at most u·|x|.
        let x = mantissa * 2f64.powi(exponent);
        prop_assert!((p.round(x) - x).abs() <= p.unit_roundoff() * x.abs());
    }

    #[test]
    fn fp8_rounding_picks_a_nearest_code(format in fp8_format(), x in -500.0f64..500.0, tiny in -0.02f64..0.02) {
        for value in [x, tiny] {
            let rounded = format.round(value);
            let target = value.clamp(-format.max(), format.max());
            let best = (0u8..=255)
                .map(|c| format.decode(c))
                .filter(|v| v.is_finite())
                .map(|v| (v - target).abs())
                .fold(f64::INFINITY, f64::min);
            prop_assert_eq!((rounded - target).abs(), best, "{} rounded {} to {}", format.name(), value, rounded);
        }
    }

    #[test]
    fn fp8_quantization_error_is_within_half_a_spacing(format in fp8_format(), xs in values(64, 10.0)) {
        let t = Fp8Tensor::quantize(&xs, format);
        let back = t.dequantize();
        // Relative half-spacing of the format, with the subnormal spacing as a floor.
        let mantissa_bits = match format { Fp8Format::E4M3 => 3, Fp8Format::E5M2 => 2 };
        let half_spacing = 2f64.powi(-mantissa_bits - 1);
        for (x, y) in xs.iter().zip(&back) {
            let floor = format.min_normal() * t.scale;
            prop_assert!((x - y).abs() <= half_spacing * x.abs().max(floor) * (1.0 + 1e-12));
        }
        prop_assert!(back.iter().all(|v| v.abs() <= format.max() * t.scale * (1.0 + 1e-15)));
    }

    #[test]
    fn hadamard_is_its_own_inverse(xs in power_of_two().prop_flat_map(|n| values(n, 100.0))) {
        let mut ys = xs.clone();
        hadamard_transform(&mut ys);
        hadamard_transform(&mut ys);
        check_close("H·H·x", &ys, &xs, 1e-12, 1e-12)?;
    }

    #[test]
    fn hadamard_preserves_dot_products(pair in power_of_two().prop_flat_map(|n| (values(n, 10.0), values(n, 10.0)))) {
        let (mut a, mut b) = pair;
        let dot = |x: &[f64], y: &[f64]| -> f64 { x.iter().zip(y).map(|(u, v)| u * v).sum() };
        let before = dot(&a, &b);
        let norm = dot(&a, &a).sqrt() * dot(&b, &b).sqrt();
        hadamard_transform(&mut a);
        hadamard_transform(&mut b);
        prop_assert!((dot(&a, &b) - before).abs() <= 1e-12 * norm.max(1.0));
    }

    #[test]
    fn hadamard_on_q_and_k_leaves_attention_unchanged(
        p in problem_with(shape(8, 1)),
        log_dim in 0u32..=4,
    ) {
        // Incoherent processing: rotating Q and K by the same orthogonal matrix keeps QKᵀ.
        let d = 1usize << log_dim;
        let s = Shape { head_dim: d, ..p.shape };
        let q: Vec<f64> = (0..s.q_len()).map(|i| ((i * 7 % 13) as f64 - 6.0) * 0.3).collect();
        let k: Vec<f64> = (0..s.kv_len()).map(|i| ((i * 5 % 11) as f64 - 5.0) * 0.3).collect();
        let v: Vec<f64> = (0..s.kv_len()).map(|i| (i as f64).cos()).collect();
        let (mut hq, mut hk) = (q.clone(), k.clone());
        hadamard_rows(&mut hq, d);
        hadamard_rows(&mut hk, d);
        let want = attention(&q, &k, &v, &s, &p.mask, p.scale);
        let got = attention(&hq, &hk, &v, &s, &p.mask, p.scale);
        check_close("O", &got.o, &want.o, 1e-12, 1e-10)?;
        check_close("LSE", &got.lse, &want.lse, 1e-12, 1e-12)?;
    }

    #[test]
    fn a_nan_anywhere_fails_every_check(xs in values(16, 5.0), at in 0usize..16) {
        let mut actual = xs.clone();
        actual[at] = f64::NAN;
        let stats = error_stats(&actual, &xs);
        prop_assert!(stats.max_abs.is_nan() && stats.rel_fro.is_nan());
        prop_assert_eq!(stats.worst_index, Some(at));
        let loose = [
            Tolerance::AllClose { atol: f64::INFINITY, rtol: f64::INFINITY },
            Tolerance::Fa3 { lowp_max_abs: f64::INFINITY, atol: f64::INFINITY },
        ];
        for tolerance in loose {
            prop_assert!(!tolerance.check(&actual, &xs).passed);
        }
    }
}
