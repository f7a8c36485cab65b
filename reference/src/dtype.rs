//! Emulation of the 16-bit floating-point formats the tensor-core kernels compute in.
//!
//! The oracle itself works in f64; these helpers let a test ask "what would the same math give
//! if its inputs, or its probabilities P, had been stored in bf16 or f16?".
//!
//! Rounding is done here rather than with `half::bf16::from_f64`: that conversion drops the
//! low 32 bits of an f64's mantissa before rounding, so a value just above a tie rounds the
//! wrong way. `half` is still the independent check: for f32 inputs (whose conversion in
//! `half` is correctly rounded) the tests require bit-identical results.

/// A 16-bit storage format used for Q, K, V, P and O in the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LowPrecision {
    /// bfloat16: 8 exponent bits, 7 stored mantissa bits.
    Bf16,
    /// IEEE binary16: 5 exponent bits, 10 stored mantissa bits.
    F16,
}

impl LowPrecision {
    /// Rounds `x` to the nearest representable value (ties to even) and returns it as f64.
    /// Overflow gives ±∞, as a hardware conversion does.
    pub fn round(self, x: f64) -> f64 {
        if !x.is_finite() || x == 0.0 {
            return x;
        }
        // A bf16 is an f32 whose low 16 bits are zero, so such a value is recognised from its
        // f32 bits and returned as it is. The emulated oracle rounds every K and V element it
        // reads, and the harness's are all bf16 values already: this check costs a quarter of
        // the rounding below.
        if self == LowPrecision::Bf16 {
            let f = x as f32;
            if f64::from(f) == x && f.to_bits() & 0xffff == 0 {
                return x;
            }
        }
        let (mantissa_bits, min_normal_exp, max) = match self {
            // bf16 has f32's exponent range: largest finite (2 − 2^-7)·2^127.
            LowPrecision::Bf16 => (7, -126, (2.0 - 2f64.powi(-7)) * 2f64.powi(127)),
            LowPrecision::F16 => (10, -14, 65504.0),
        };
        let magnitude = round_to_grid(x.abs(), mantissa_bits, min_normal_exp);
        // Past the largest finite value, round-to-nearest gives infinity (IEEE 754 overflow).
        let magnitude = if magnitude > max {
            f64::INFINITY
        } else {
            magnitude
        };
        magnitude.copysign(x)
    }

    /// Rounds every element of `xs` in place.
    pub fn round_slice(self, xs: &mut [f64]) {
        for x in xs {
            *x = self.round(*x);
        }
    }

    /// A rounded copy of `xs`, for turning f64 test inputs into what the kernel will see.
    pub fn rounded(self, xs: &[f64]) -> Vec<f64> {
        xs.iter().map(|&x| self.round(x)).collect()
    }

    /// The unit roundoff u = 2^-(p) where p counts the significand bits including the hidden
    /// one: the largest relative error of one rounding of a normal number.
    pub fn unit_roundoff(self) -> f64 {
        match self {
            LowPrecision::Bf16 => 2f64.powi(-8),
            LowPrecision::F16 => 2f64.powi(-11),
        }
    }

    /// The name PyTorch and the kernels use for this dtype.
    pub fn name(self) -> &'static str {
        match self {
            LowPrecision::Bf16 => "bf16",
            LowPrecision::F16 => "f16",
        }
    }
}

/// The arithmetic an oracle computation is done in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Exact math in f64: the ground truth.
    F64,
    /// The same attention computed the way PyTorch eager code does in a 16-bit dtype with f32
    /// accumulation; see [`crate::oracle::attention_rows`] for the exact recipe. FlashAttention-3
    /// measures a kernel against the error this computation makes.
    Emulated(LowPrecision),
}

/// Rounds `x` to f32 (ties to even) and back: the emulated kernels accumulate in f32.
pub fn round_f32(x: f64) -> f64 {
    x as f32 as f64
}

/// Rounds a non-negative finite magnitude to the grid of a binary format with `mantissa_bits`
/// stored mantissa bits and smallest normal exponent `min_normal_exp`, ties to even, ignoring
/// the format's upper range (callers decide between saturation and infinity).
///
/// In binade `2^e` the grid spacing is `2^(e − mantissa_bits)`; below the smallest normal the
/// spacing stays at its subnormal value. Dividing by a power of two is exact, so
/// `round_ties_even` sees the true ratio and there is no double rounding.
pub(crate) fn round_to_grid(a: f64, mantissa_bits: i32, min_normal_exp: i32) -> f64 {
    debug_assert!(a >= 0.0 && a.is_finite());
    let exponent = if a < pow2(min_normal_exp) {
        min_normal_exp
    } else {
        floor_log2(a)
    };
    let spacing = pow2(exponent - mantissa_bits);
    (a / spacing).round_ties_even() * spacing
}

/// 2^e for a normal-range exponent, built from its bits: this runs once per rounded element,
/// and the oracle's emulation rounds every element it touches.
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// ⌊log2 a⌋ for a positive normal f64, read from its exponent field (exact, unlike `log2`).
pub(crate) fn floor_log2(a: f64) -> i32 {
    debug_assert!(a.is_normal() && a > 0.0);
    ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        let p = LowPrecision::Bf16;
        // 1 + 2^-8 sits exactly between 1 and 1 + 2^-7: ties go to the even mantissa, i.e. 1.
        assert_eq!(p.round(1.0 + 2f64.powi(-8)), 1.0);
        // 1 + 3·2^-8 sits between 1 + 2^-7 (odd) and 1 + 2^-6 (even): ties go up.
        assert_eq!(p.round(1.0 + 3.0 * 2f64.powi(-8)), 1.0 + 2f64.powi(-6));
        // Just above the tie rounds up; this checks there is no double rounding via f32.
        assert_eq!(
            p.round(1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
            1.0 + 2f64.powi(-7)
        );
        assert_eq!(p.round(3.0e38 * 10.0), f64::INFINITY);
    }

    #[test]
    fn f16_rounds_to_nearest_even() {
        let p = LowPrecision::F16;
        assert_eq!(p.round(1.0 + 2f64.powi(-11)), 1.0);
        assert_eq!(p.round(1.0 + 3.0 * 2f64.powi(-11)), 1.0 + 2f64.powi(-9));
        assert_eq!(
            p.round(1.0 + 2f64.powi(-11) + 2f64.powi(-45)),
            1.0 + 2f64.powi(-10)
        );
        assert_eq!(p.round(65504.0), 65504.0);
        assert_eq!(p.round(70000.0), f64::INFINITY);
        assert_eq!(p.round(2f64.powi(-24)), 2f64.powi(-24));
    }

    #[test]
    fn agrees_with_half_on_f32_inputs() {
        // `half` rounds f32 correctly, so on f32 inputs both must agree bit for bit. The sweep
        // covers every binade (subnormals, normals, overflow); the second list is made of exact
        // bf16 ties (low 16 bits 0x8000) and exact f16-mantissa ties (low 13 bits 0x1000); the
        // third is every bf16 value (which `round` returns early) and its f32 neighbours.
        let sweep = (1..0x7f80_0000u32).step_by(997);
        let bf16_ties = (0..0x7f80u32).map(|hi| hi << 16 | 0x8000);
        let f16_ties = (0..0x3_fc00u32).step_by(3).map(|hi| hi << 13 | 0x1000);
        let bf16_values = (1..0x7f80u32).flat_map(|hi| [(hi << 16) - 1, hi << 16, hi << 16 | 1]);
        for bits in sweep.chain(bf16_ties).chain(f16_ties).chain(bf16_values) {
            let x = f32::from_bits(bits);
            for v in [x, -x] {
                let want_bf16 = half::bf16::from_f32(v).to_f64();
                let want_f16 = half::f16::from_f32(v).to_f64();
                assert_eq!(
                    LowPrecision::Bf16.round(f64::from(v)),
                    want_bf16,
                    "bf16 {v:e}"
                );
                assert_eq!(LowPrecision::F16.round(f64::from(v)), want_f16, "f16 {v:e}");
            }
        }
    }

    #[test]
    fn specials_pass_through() {
        for p in [LowPrecision::Bf16, LowPrecision::F16] {
            assert!(p.round(f64::NAN).is_nan());
            assert_eq!(p.round(f64::NEG_INFINITY), f64::NEG_INFINITY);
            assert!(p.round(-0.0).is_sign_negative());
            assert_eq!(p.round(1e-300), 0.0);
        }
    }

    #[test]
    fn unit_roundoff_bounds_the_relative_error() {
        for p in [LowPrecision::Bf16, LowPrecision::F16] {
            let u = p.unit_roundoff();
            for k in 1..2000 {
                let x = 1.0 + k as f64 * 0.000_731_3;
                assert!(((p.round(x) - x) / x).abs() <= u, "{} at {x}", p.name());
            }
        }
        assert_eq!(LowPrecision::Bf16.unit_roundoff(), 1.0 / 256.0);
        assert_eq!(LowPrecision::F16.unit_roundoff(), 1.0 / 2048.0);
    }
}
