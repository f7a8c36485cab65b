//! FP8 emulation: the OCP 8-bit formats E4M3 and E5M2, and per-tensor scaled quantization.
//!
//! Written from the format definitions rather than a library so a reader can see every rule:
//!
//! | format | exponent bits | bias | mantissa bits | largest finite | infinity | NaN codes |
//! |--------|---------------|------|---------------|----------------|----------|-----------|
//! | E4M3   | 4             | 7    | 3             | 448            | none     | S.1111.111 |
//! | E5M2   | 5             | 15   | 2             | 57344          | S.11111.00 | S.11111.{01,10,11} |
//!
//! Conversion rounds to nearest, ties to even, and saturates finite overflow to ±max (what
//! CUDA's `__nv_cvt_*` does with `__NV_SATFINITE`, the mode FP8 attention kernels use): an
//! activation slightly above the scale's range must not become infinity or NaN.

use crate::dtype::{floor_log2, round_to_grid};

/// One of the two OCP FP8 formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fp8Format {
    /// More precision, less range; the usual choice for Q, K, V in the forward pass.
    E4M3,
    /// More range, less precision; the usual choice for gradients.
    E5M2,
}

impl Fp8Format {
    fn exponent_bits(self) -> u32 {
        match self {
            Fp8Format::E4M3 => 4,
            Fp8Format::E5M2 => 5,
        }
    }

    fn mantissa_bits(self) -> u32 {
        match self {
            Fp8Format::E4M3 => 3,
            Fp8Format::E5M2 => 2,
        }
    }

    fn bias(self) -> i32 {
        match self {
            Fp8Format::E4M3 => 7,
            Fp8Format::E5M2 => 15,
        }
    }

    /// The largest finite magnitude: 1.75 · 2^8 for E4M3, 1.75 · 2^15 for E5M2.
    pub fn max(self) -> f64 {
        match self {
            Fp8Format::E4M3 => 448.0,
            Fp8Format::E5M2 => 57344.0,
        }
    }

    /// The smallest positive normal number, 2^(1 - bias).
    pub fn min_normal(self) -> f64 {
        2f64.powi(1 - self.bias())
    }

    /// The smallest positive subnormal number, 2^(1 - bias - mantissa_bits).
    pub fn min_subnormal(self) -> f64 {
        2f64.powi(1 - self.bias() - self.mantissa_bits() as i32)
    }

    /// The canonical NaN code (positive sign, all exponent and mantissa bits set).
    pub fn nan_code(self) -> u8 {
        0x7f
    }

    /// The format's name as the kernels spell it.
    pub fn name(self) -> &'static str {
        match self {
            Fp8Format::E4M3 => "e4m3",
            Fp8Format::E5M2 => "e5m2",
        }
    }

    /// The value an 8-bit code stands for.
    pub fn decode(self, code: u8) -> f64 {
        let m_bits = self.mantissa_bits();
        let e_max = (1u32 << self.exponent_bits()) - 1;
        let m_max = (1u32 << m_bits) - 1;
        let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
        let exponent = (u32::from(code) >> m_bits) & e_max;
        let mantissa = u32::from(code) & m_max;
        match self {
            Fp8Format::E4M3 if exponent == e_max && mantissa == m_max => return f64::NAN,
            Fp8Format::E5M2 if exponent == e_max && mantissa == 0 => return sign * f64::INFINITY,
            Fp8Format::E5M2 if exponent == e_max => return f64::NAN,
            _ => {}
        }
        let magnitude = if exponent == 0 {
            // Subnormal: no hidden bit, exponent fixed at 1 - bias.
            f64::from(mantissa) * self.min_subnormal()
        } else {
            let significand = f64::from((1u32 << m_bits) + mantissa);
            significand * 2f64.powi(exponent as i32 - self.bias() - m_bits as i32)
        };
        sign * magnitude
    }

    /// Rounds `x` to the nearest code, ties to even, saturating finite overflow to ±max.
    /// NaN gives the canonical NaN; -0 keeps its sign; ±∞ gives E5M2's infinity and saturates
    /// to ±448 in E4M3, which has no infinity.
    pub fn encode(self, x: f64) -> u8 {
        if x.is_nan() {
            return self.nan_code();
        }
        let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
        if x.is_infinite() && self == Fp8Format::E5M2 {
            return sign | 0x7c;
        }
        let magnitude = self.round_magnitude(x.abs()).min(self.max());
        let m_bits = self.mantissa_bits();
        let bits = if magnitude < self.min_normal() {
            // Exact: magnitude is an integer multiple of the subnormal spacing.
            (magnitude / self.min_subnormal()) as u32
        } else {
            let e = floor_log2(magnitude);
            let significand = (magnitude / 2f64.powi(e - m_bits as i32)) as u32;
            let biased = (e + self.bias()) as u32;
            (biased << m_bits) | (significand - (1 << m_bits))
        };
        sign | bits as u8
    }

    /// `decode(encode(x))`: the value a kernel sees after converting `x` to this format.
    pub fn round(self, x: f64) -> f64 {
        self.decode(self.encode(x))
    }

    /// Rounds a non-negative magnitude to the format's grid without saturating.
    fn round_magnitude(self, a: f64) -> f64 {
        if a.is_infinite() {
            return a;
        }
        round_to_grid(a, self.mantissa_bits() as i32, 1 - self.bias())
    }
}

/// A tensor stored as FP8 codes with one f64 scale: the real value of element `i` is
/// `decode(codes[i]) * scale`. The scale is what FlashAttention-3 calls the "descale" factor.
#[derive(Clone, Debug, PartialEq)]
pub struct Fp8Tensor {
    pub format: Fp8Format,
    pub codes: Vec<u8>,
    pub scale: f64,
}

impl Fp8Tensor {
    /// Per-tensor quantization with `scale = amax / format.max()`, so the largest magnitude
    /// lands on the format's largest value and the whole range is used. An all-zero tensor gets
    /// scale 1. Non-finite inputs are not given a meaningful scale: the caller must not pass them.
    pub fn quantize(values: &[f64], format: Fp8Format) -> Self {
        let amax = values.iter().fold(0.0f64, |m, &x| m.max(x.abs()));
        assert!(
            amax.is_finite(),
            "cannot pick an FP8 scale for non-finite values"
        );
        let scale = if amax > 0.0 { amax / format.max() } else { 1.0 };
        Fp8Tensor::quantize_with_scale(values, format, scale)
    }

    /// Quantization with a scale chosen by the caller (e.g. a delayed-scaling amax history).
    pub fn quantize_with_scale(values: &[f64], format: Fp8Format, scale: f64) -> Self {
        assert!(
            scale > 0.0 && scale.is_finite(),
            "FP8 scale must be positive and finite"
        );
        let codes = values.iter().map(|&x| format.encode(x / scale)).collect();
        Fp8Tensor {
            format,
            codes,
            scale,
        }
    }

    /// The real values the codes stand for.
    pub fn dequantize(&self) -> Vec<f64> {
        self.codes
            .iter()
            .map(|&c| self.format.decode(c) * self.scale)
            .collect()
    }
}

/// Quantize then dequantize: the values an FP8 kernel effectively computes with.
pub fn fake_quantize(values: &[f64], format: Fp8Format) -> Vec<f64> {
    Fp8Tensor::quantize(values, format).dequantize()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMATS: [Fp8Format; 2] = [Fp8Format::E4M3, Fp8Format::E5M2];

    fn finite_codes(format: Fp8Format) -> impl Iterator<Item = u8> {
        (0u8..=255).filter(move |&c| format.decode(c).is_finite())
    }

    #[test]
    fn known_codes_decode_to_their_definition() {
        let e4 = Fp8Format::E4M3;
        assert_eq!(e4.decode(0x00), 0.0);
        assert_eq!(e4.decode(0x01), 2f64.powi(-9));
        assert_eq!(e4.decode(0x07), 7.0 * 2f64.powi(-9));
        assert_eq!(e4.decode(0x08), 2f64.powi(-6));
        assert_eq!(e4.decode(0x38), 1.0);
        assert_eq!(e4.decode(0x7e), 448.0);
        assert_eq!(e4.decode(0xfe), -448.0);
        assert!(e4.decode(0x7f).is_nan() && e4.decode(0xff).is_nan());
        // 0x78..0x7e are ordinary numbers in E4M3 (there is no infinity).
        assert_eq!(e4.decode(0x78), 256.0);

        let e5 = Fp8Format::E5M2;
        assert_eq!(e5.decode(0x01), 2f64.powi(-16));
        assert_eq!(e5.decode(0x04), 2f64.powi(-14));
        assert_eq!(e5.decode(0x3c), 1.0);
        assert_eq!(e5.decode(0x7b), 57344.0);
        assert_eq!(e5.decode(0x7c), f64::INFINITY);
        assert_eq!(e5.decode(0xfc), f64::NEG_INFINITY);
        for nan in [0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff] {
            assert!(e5.decode(nan).is_nan());
        }
    }

    #[test]
    fn code_counts_match_the_format_definitions() {
        let nan_count = |f: Fp8Format| (0u8..=255).filter(|&c| f.decode(c).is_nan()).count();
        let inf_count = |f: Fp8Format| (0u8..=255).filter(|&c| f.decode(c).is_infinite()).count();
        assert_eq!(
            (nan_count(Fp8Format::E4M3), inf_count(Fp8Format::E4M3)),
            (2, 0)
        );
        assert_eq!(
            (nan_count(Fp8Format::E5M2), inf_count(Fp8Format::E5M2)),
            (6, 2)
        );
        for f in FORMATS {
            assert_eq!(
                f.max(),
                finite_codes(f).map(|c| f.decode(c)).fold(0.0, f64::max)
            );
            let smallest = finite_codes(f)
                .map(|c| f.decode(c))
                .filter(|&x| x > 0.0)
                .fold(f64::INFINITY, f64::min);
            assert_eq!(smallest, f.min_subnormal());
        }
    }

    #[test]
    fn every_code_round_trips() {
        for f in FORMATS {
            for code in 0u8..=255 {
                let value = f.decode(code);
                if value.is_nan() {
                    assert_eq!(f.encode(value), f.nan_code());
                } else {
                    assert_eq!(f.encode(value), code, "{} code {code:#04x}", f.name());
                }
            }
        }
    }

    #[test]
    fn positive_codes_are_strictly_increasing() {
        for f in FORMATS {
            let values: Vec<f64> = (0u8..0x80)
                .map(|c| f.decode(c))
                .filter(|x| !x.is_nan())
                .collect();
            assert!(values.windows(2).all(|w| w[0] < w[1]), "{}", f.name());
        }
    }

    #[test]
    fn midpoints_round_to_even_and_neighbours_to_nearest() {
        for f in FORMATS {
            let mut grid: Vec<(u8, f64)> = finite_codes(f)
                .filter(|&c| c < 0x80)
                .map(|c| (c, f.decode(c)))
                .collect();
            grid.sort_by(|a, b| a.1.total_cmp(&b.1));
            for pair in grid.windows(2) {
                let ((lo_code, lo), (hi_code, hi)) = (pair[0], pair[1]);
                let mid = 0.5 * (lo + hi);
                let even = if lo_code % 2 == 0 { lo_code } else { hi_code };
                assert_eq!(
                    f.encode(mid),
                    even,
                    "{} tie between {lo} and {hi}",
                    f.name()
                );
                assert_eq!(f.encode(-mid), even | 0x80);
                let nudge = (hi - lo) * 1e-6;
                assert_eq!(f.encode(mid - nudge), lo_code);
                assert_eq!(f.encode(mid + nudge), hi_code);
            }
        }
    }

    #[test]
    fn overflow_saturates_and_specials_are_kept() {
        let e4 = Fp8Format::E4M3;
        assert_eq!(e4.round(460.0), 448.0);
        assert_eq!(e4.round(1e9), 448.0);
        assert_eq!(e4.round(f64::NEG_INFINITY), -448.0);
        assert_eq!(e4.encode(-0.0), 0x80);
        assert_eq!(e4.encode(1e-300), 0x00);
        let e5 = Fp8Format::E5M2;
        assert_eq!(e5.round(1e9), 57344.0);
        assert_eq!(e5.round(f64::INFINITY), f64::INFINITY);
        assert_eq!(e5.encode(f64::NAN), 0x7f);
    }

    #[test]
    fn per_tensor_quantization_maps_amax_to_max_and_bounds_the_error() {
        let values: Vec<f64> = (0..200)
            .map(|i| ((i as f64) * 0.37).sin() * 3.0 - 0.1)
            .collect();
        let amax = values.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for f in FORMATS {
            let t = Fp8Tensor::quantize(&values, f);
            assert_eq!(t.scale, amax / f.max());
            let back = t.dequantize();
            // Half a spacing relative to the value, for values in the normal range.
            let rel = 2f64.powi(-(f.mantissa_bits() as i32) - 1);
            for (x, y) in values.iter().zip(&back) {
                let floor = f.min_normal() * t.scale;
                assert!((x - y).abs() <= rel * x.abs().max(floor) * (1.0 + 1e-12));
            }
            let i_max = values.iter().position(|x| x.abs() == amax).unwrap();
            assert!((back[i_max].abs() - amax).abs() <= amax * 1e-15);
        }
        let zeros = Fp8Tensor::quantize(&[0.0, 0.0], Fp8Format::E4M3);
        assert_eq!((zeros.scale, zeros.dequantize()), (1.0, vec![0.0, 0.0]));
    }
}
