//! The normalized fast Walsh–Hadamard transform, for "incoherent processing" in the FP8 stages.
//!
//! Multiplying Q and K by the same orthonormal matrix H leaves every score q·k unchanged
//! (HᵀH = I) while spreading an outlier in one coordinate across all of them, which shrinks the
//! amax and so the FP8 quantization error. The Sylvester-ordered Hadamard matrix scaled by
//! 1/√n is symmetric and orthogonal, hence its own inverse, and applies in O(n log n) with the
//! butterfly below.

/// Applies the orthonormal Walsh–Hadamard transform to `x` in place.
/// Panics unless the length is a power of two (the only sizes a Sylvester matrix exists for).
pub fn hadamard_transform(x: &mut [f64]) {
    let n = x.len();
    assert!(
        n.is_power_of_two(),
        "Hadamard length must be a power of two, got {n}"
    );
    let mut half = 1;
    while half < n {
        for block in x.chunks_exact_mut(2 * half) {
            let (a, b) = block.split_at_mut(half);
            for (u, w) in a.iter_mut().zip(b.iter_mut()) {
                let (s, d) = (*u + *w, *u - *w);
                *u = s;
                *w = d;
            }
        }
        half *= 2;
    }
    let norm = 1.0 / (n as f64).sqrt();
    for v in x {
        *v *= norm;
    }
}

/// Transforms every contiguous row of length `dim` (e.g. every head vector of a BSHD tensor,
/// whose innermost dimension is `head_dim`).
pub fn hadamard_rows(data: &mut [f64], dim: usize) {
    assert!(
        dim > 0 && data.len() % dim == 0,
        "data is not a whole number of rows"
    );
    for row in data.chunks_exact_mut(dim) {
        hadamard_transform(row);
    }
}

/// Entry (i, j) of the normalized Sylvester Hadamard matrix of order `n`:
/// (-1)^popcount(i & j) / √n. Used by the tests as an independent definition.
pub fn hadamard_entry(n: usize, i: usize, j: usize) -> f64 {
    let sign = if (i & j).count_ones() % 2 == 0 {
        1.0
    } else {
        -1.0
    };
    sign / (n as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn sample(n: usize, seed: f64) -> Vec<f64> {
        (0..n)
            .map(|i| ((i as f64 + seed) * 1.618).sin() * 2.0)
            .collect()
    }

    #[test]
    fn matches_the_explicit_matrix() {
        for n in [1, 2, 4, 8, 16, 64] {
            let x = sample(n, 0.3);
            let mut fast = x.clone();
            hadamard_transform(&mut fast);
            for (i, got) in fast.iter().enumerate() {
                let want: f64 = (0..n).map(|j| hadamard_entry(n, i, j) * x[j]).sum();
                assert_relative_eq!(*got, want, epsilon = 1e-12);
            }
        }
    }

    #[test]
    fn order_two_is_the_textbook_matrix() {
        let mut x = vec![3.0, 1.0];
        hadamard_transform(&mut x);
        let r = 1.0 / 2f64.sqrt();
        assert_relative_eq!(x[0], 4.0 * r, epsilon = 1e-15);
        assert_relative_eq!(x[1], 2.0 * r, epsilon = 1e-15);
    }

    #[test]
    fn is_its_own_inverse() {
        for n in [1, 2, 8, 128, 256] {
            let x = sample(n, 1.1);
            let mut y = x.clone();
            hadamard_transform(&mut y);
            hadamard_transform(&mut y);
            for (a, b) in x.iter().zip(&y) {
                assert_relative_eq!(a, b, epsilon = 1e-12);
            }
        }
    }

    #[test]
    fn preserves_dot_products() {
        for n in [4, 64, 128] {
            let (mut q, mut k) = (sample(n, 0.0), sample(n, 5.0));
            let before: f64 = q.iter().zip(&k).map(|(a, b)| a * b).sum();
            hadamard_transform(&mut q);
            hadamard_transform(&mut k);
            let after: f64 = q.iter().zip(&k).map(|(a, b)| a * b).sum();
            assert_relative_eq!(before, after, epsilon = 1e-11);
        }
    }

    #[test]
    fn spreads_an_outlier_evenly() {
        let mut x = vec![0.0; 16];
        x[5] = 8.0;
        hadamard_transform(&mut x);
        assert!(x.iter().all(|v| (v.abs() - 2.0).abs() < 1e-12));
    }

    #[test]
    fn rows_are_transformed_independently() {
        let mut data = vec![1.0, 1.0, 1.0, -1.0];
        hadamard_rows(&mut data, 2);
        let r = 2f64.sqrt();
        assert_relative_eq!(
            data.as_slice(),
            [r, 0.0, 0.0, r].as_slice(),
            epsilon = 1e-15
        );
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn rejects_other_lengths() {
        hadamard_transform(&mut [1.0, 2.0, 3.0]);
    }
}
