//! Error metrics and the tolerances the stages are checked with.
//!
//! A check must never pass by accident: a NaN anywhere in the actual values makes every
//! statistic NaN (and NaN fails every `<=`), and an infinity where a finite value was expected
//! makes the error infinite. Matching infinities (a fully masked row's LSE of −∞ on both sides)
//! count as exact.

use crate::dtype::LowPrecision;
use std::fmt;

/// Summary of how far `actual` is from `expected`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorStats {
    /// `max_i |a_i − e_i|`.
    pub max_abs: f64,
    /// `max_i |a_i − e_i| / |e_i|` over elements with `e_i ≠ 0` (zeros are left to `max_abs`,
    /// since any error relative to zero is infinite and says nothing useful).
    pub max_rel: f64,
    /// `‖a − e‖_F / ‖e‖_F`: one number for the whole tensor, insensitive to single outliers.
    pub rel_fro: f64,
    /// Number of elements compared.
    pub count: usize,
    /// Number of elements where `actual` or `expected` is NaN.
    pub nan_count: usize,
    /// Index of the element with the largest absolute error (the first NaN if there is one).
    pub worst_index: Option<usize>,
}

impl ErrorStats {
    /// Whether no NaN was seen and every error is finite.
    pub fn is_finite(&self) -> bool {
        self.nan_count == 0 && self.max_abs.is_finite() && self.rel_fro.is_finite()
    }
}

/// Compares two equally long slices; panics if their lengths differ.
pub fn error_stats(actual: &[f64], expected: &[f64]) -> ErrorStats {
    assert_eq!(
        actual.len(),
        expected.len(),
        "comparing slices of different lengths"
    );
    let mut stats = ErrorStats {
        max_abs: 0.0,
        max_rel: 0.0,
        rel_fro: 0.0,
        count: actual.len(),
        nan_count: 0,
        worst_index: None,
    };
    let (mut diff_sq, mut ref_sq) = (0.0f64, 0.0f64);
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        if a.is_nan() || e.is_nan() {
            if stats.nan_count == 0 {
                stats.worst_index = Some(i);
            }
            stats.nan_count += 1;
            continue;
        }
        // `a == e` first so that −∞ vs −∞ is an exact match instead of ∞ − ∞ = NaN.
        let diff = if a == e { 0.0 } else { (a - e).abs() };
        if stats.nan_count == 0 && (stats.worst_index.is_none() || diff > stats.max_abs) {
            stats.worst_index = Some(i);
        }
        stats.max_abs = stats.max_abs.max(diff);
        if e != 0.0 && e.is_finite() {
            stats.max_rel = stats.max_rel.max(diff / e.abs());
        } else if e.is_infinite() && diff > 0.0 {
            stats.max_rel = f64::INFINITY;
        }
        diff_sq += diff * diff;
        if e.is_finite() {
            ref_sq += e * e;
        }
    }
    stats.rel_fro = if diff_sq == 0.0 {
        0.0
    } else if ref_sq == 0.0 {
        f64::INFINITY
    } else {
        (diff_sq / ref_sq).sqrt()
    };
    if stats.nan_count > 0 {
        stats.max_abs = f64::NAN;
        stats.max_rel = f64::NAN;
        stats.rel_fro = f64::NAN;
    }
    stats
}

/// FA3's rule: kernel error <= 2 * (error of the same math in the low-precision dtype) + atol.
pub fn fa3_bound(lowp_max_abs: f64, atol: f64) -> f64 {
    2.0 * lowp_max_abs + atol
}

/// The absolute slack FlashAttention-3's tests add to [`fa3_bound`]: twice the largest error
/// made by adding and then subtracting 0.3 in the dtype, for the expected values stored in
/// that dtype. It is about one unit in the last place of numbers near 0.3, scaled to the data.
pub fn fa3_atol(expected: &[f64], precision: LowPrecision) -> f64 {
    let worst = expected
        .iter()
        .map(|&e| {
            let stored = precision.round(e);
            let round_trip = precision.round(precision.round(stored + 0.3) - 0.3);
            (round_trip - stored).abs()
        })
        .fold(0.0, f64::max);
    2.0 * worst
}

/// A rule deciding whether `actual` is close enough to `expected`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Element-wise `|a − e| <= atol + rtol·|e|`, as `torch.allclose` and `numpy.allclose`.
    AllClose { atol: f64, rtol: f64 },
    /// Whole-tensor `max_abs <= 2·lowp_max_abs + atol` (see [`fa3_bound`]), where
    /// `lowp_max_abs` is the error of the reference math done in the low-precision dtype.
    Fa3 { lowp_max_abs: f64, atol: f64 },
}

impl Tolerance {
    /// Applies the rule and returns the verdict together with the numbers behind it.
    pub fn check(&self, actual: &[f64], expected: &[f64]) -> Check {
        let stats = error_stats(actual, expected);
        let passed = stats.nan_count == 0
            && match *self {
                Tolerance::AllClose { atol, rtol } => actual
                    .iter()
                    .zip(expected)
                    .all(|(&a, &e)| a == e || (a - e).abs() <= atol + rtol * e.abs()),
                Tolerance::Fa3 { lowp_max_abs, atol } => {
                    stats.max_abs <= fa3_bound(lowp_max_abs, atol)
                }
            };
        let worst = stats.worst_index.map(|i| (i, actual[i], expected[i]));
        Check {
            passed,
            stats,
            tolerance: *self,
            worst,
        }
    }
}

/// FlashAttention-3's check in one call: measures the emulated low-precision reference
/// `lowp` against the exact `expected`, derives the atol with [`fa3_atol`], and applies
/// [`Tolerance::Fa3`] to `actual`.
pub fn check_fa3(actual: &[f64], lowp: &[f64], expected: &[f64], precision: LowPrecision) -> Check {
    let lowp_max_abs = error_stats(lowp, expected).max_abs;
    let atol = fa3_atol(expected, precision);
    Tolerance::Fa3 { lowp_max_abs, atol }.check(actual, expected)
}

/// A verdict with its evidence; `Display` prints one readable line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    pub passed: bool,
    pub stats: ErrorStats,
    pub tolerance: Tolerance,
    /// `(index, actual, expected)` at the largest absolute error (or the first NaN).
    pub worst: Option<(usize, f64, f64)>,
}

impl Check {
    /// Panics with the full verdict unless it passed; `what` names the tensor (e.g. "O").
    #[track_caller]
    pub fn assert_passed(&self, what: &str) {
        assert!(self.passed, "{what}: {self}");
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        write!(f, "{}: ", if self.passed { "PASS" } else { "FAIL" })?;
        match self.tolerance {
            Tolerance::AllClose { atol, rtol } => {
                write!(f, "allclose(atol {atol:.3e}, rtol {rtol:.3e})")?
            }
            Tolerance::Fa3 { lowp_max_abs, atol } => write!(
                f,
                "max_abs {:.3e} vs bound {:.3e} (2 x low-precision error {lowp_max_abs:.3e} + atol {atol:.3e})",
                s.max_abs,
                fa3_bound(lowp_max_abs, atol)
            )?,
        }
        write!(
            f,
            "; max_abs {:.3e}, max_rel {:.3e}, rel_fro {:.3e} over {} values",
            s.max_abs, s.max_rel, s.rel_fro, s.count
        )?;
        if s.nan_count > 0 {
            write!(f, ", {} NaN", s.nan_count)?;
        }
        if let Some((i, a, e)) = self.worst {
            write!(f, "; worst at [{i}]: actual {a} expected {e}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn stats_by_hand() {
        let s = error_stats(&[1.0, 2.5, -3.0, 0.1], &[1.0, 2.0, -4.0, 0.0]);
        assert_eq!(s.max_abs, 1.0);
        assert_eq!(s.worst_index, Some(2));
        assert_relative_eq!(s.max_rel, 0.25);
        // ‖(0, 0.5, 1, 0.1)‖ / ‖(1, 2, −4, 0)‖ = √1.26 / √21.
        assert_relative_eq!(s.rel_fro, (1.26f64 / 21.0).sqrt(), epsilon = 1e-15);
        assert_eq!((s.count, s.nan_count), (4, 0));
    }

    #[test]
    fn nan_fails_loudly() {
        let s = error_stats(&[1.0, f64::NAN, 3.0], &[1.0, 2.0, 30.0]);
        assert!(s.max_abs.is_nan() && s.max_rel.is_nan() && s.rel_fro.is_nan());
        assert_eq!((s.nan_count, s.worst_index), (1, Some(1)));
        assert!(!s.is_finite());
        let check = Tolerance::AllClose {
            atol: 1e9,
            rtol: 1e9,
        }
        .check(&[f64::NAN], &[0.0]);
        assert!(!check.passed);
        let fa3 = Tolerance::Fa3 {
            lowp_max_abs: 1e9,
            atol: 1e9,
        }
        .check(&[f64::NAN], &[0.0]);
        assert!(!fa3.passed);
    }

    #[test]
    fn matching_infinities_are_exact_and_mismatched_ones_are_not() {
        let ninf = f64::NEG_INFINITY;
        let s = error_stats(&[ninf, 1.0], &[ninf, 1.0]);
        assert_eq!((s.max_abs, s.max_rel, s.rel_fro), (0.0, 0.0, 0.0));
        let s = error_stats(&[-1e30, 1.0], &[ninf, 1.0]);
        assert_eq!(
            (s.max_abs, s.max_rel, s.rel_fro),
            (f64::INFINITY, f64::INFINITY, f64::INFINITY)
        );
        let s = error_stats(&[ninf], &[0.5]);
        assert_eq!(s.max_abs, f64::INFINITY);
    }

    #[test]
    fn all_zero_reference() {
        assert_eq!(error_stats(&[0.0, 0.0], &[0.0, 0.0]).rel_fro, 0.0);
        let s = error_stats(&[1e-3, 0.0], &[0.0, 0.0]);
        assert_eq!(
            (s.max_abs, s.max_rel, s.rel_fro),
            (1e-3, 0.0, f64::INFINITY)
        );
    }

    #[test]
    fn fa3_rule() {
        assert_eq!(fa3_bound(1e-3, 1e-5), 2.01e-3);
        let ok = Tolerance::Fa3 {
            lowp_max_abs: 0.5,
            atol: 0.0,
        }
        .check(&[1.9], &[1.0]);
        let bad = Tolerance::Fa3 {
            lowp_max_abs: 0.4,
            atol: 0.0,
        }
        .check(&[1.9], &[1.0]);
        assert!(ok.passed && !bad.passed);
        assert!(
            bad.to_string()
                .starts_with("FAIL: max_abs 9.000e-1 vs bound 8.000e-1")
        );
    }

    #[test]
    fn fa3_atol_is_about_one_ulp_near_a_third() {
        // Values near 0.3 lie in [0.25, 0.5) where bf16's spacing is 2^-9; adding and
        // subtracting 0.3 can move a value by at most about one such spacing.
        let expected: Vec<f64> = (0..100).map(|i| -0.5 + i as f64 * 0.01).collect();
        let atol = fa3_atol(&expected, LowPrecision::Bf16);
        assert!(atol > 0.0 && atol <= 2.0 * 2f64.powi(-8), "{atol}");
        // For 0 it is twice bf16's error in representing 0.3 itself (bf16(0.3) = 0.30078125),
        // that difference being stored in bf16 too.
        let want = 2.0 * LowPrecision::Bf16.round(0.30078125 - 0.3);
        assert_eq!(fa3_atol(&[0.0], LowPrecision::Bf16), want);
    }

    #[test]
    fn allclose_is_elementwise() {
        let tol = Tolerance::AllClose {
            atol: 0.1,
            rtol: 0.01,
        };
        assert!(tol.check(&[1.0, 100.0], &[1.05, 101.0]).passed);
        let check = tol.check(&[1.0, 100.0], &[1.2, 100.0]);
        assert!(!check.passed);
        assert_eq!(check.worst, Some((0, 1.0, 1.2)));
    }

    #[test]
    #[should_panic(expected = "O: FAIL")]
    fn assert_passed_names_the_tensor() {
        Tolerance::AllClose {
            atol: 0.0,
            rtol: 0.0,
        }
        .check(&[1.0], &[2.0])
        .assert_passed("O");
    }
}
