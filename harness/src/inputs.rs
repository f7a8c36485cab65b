//! Seeded random inputs that are not zero-mean, in the problem's dtype.
//!
//! Zero-mean inputs make O nearly zero-mean too, which inflates relative errors and can
//! hide a missing term; so Q, K and V are drawn from a normal distribution with mean 0.5
//! and standard deviation 1 (as learn-cuda does), then rounded to bf16 or f16. The oracle
//! sees exactly the rounded values.

use crate::{DType, Problem};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

pub const MEAN: f32 = 0.5;
pub const STD_DEV: f32 = 1.0;

/// Q, K and V as 16-bit patterns of the problem's dtype, BSHD.
pub struct HostInputs {
    pub dtype: DType,
    pub seed: u64,
    pub q: Vec<u16>,
    pub k: Vec<u16>,
    pub v: Vec<u16>,
}

impl HostInputs {
    pub fn generate(problem: &Problem, seed: u64) -> HostInputs {
        let d = problem.dtype;
        HostInputs {
            dtype: d,
            seed,
            q: normal_bits(problem.shape.q_len(), d, seed),
            k: normal_bits(problem.shape.kv_len(), d, seed ^ 0x4b),
            v: normal_bits(problem.shape.kv_len(), d, seed ^ 0x56),
        }
    }

    /// The exact values the kernel sees, widened for the oracle.
    pub fn to_f64(&self, bits: &[u16]) -> Vec<f64> {
        bits.par_iter()
            .map(|&b| self.dtype.from_bits(b) as f64)
            .collect()
    }
}

/// Multiplies the keys `keys` (every batch and KV head) by `factor`, so their scores
/// jump above those of the keys before: a kernel's running max must move when they
/// arrive (stage 9's lazy rescale moves it only for jumps of more than 8 in log2 units).
pub fn scale_keys(
    problem: &Problem,
    inputs: &mut HostInputs,
    keys: std::ops::Range<usize>,
    factor: f32,
) {
    let (d, h) = (problem.shape.head_dim, problem.shape.kv_heads);
    for b in 0..problem.shape.batch {
        for j in keys.clone().filter(|&j| j < problem.shape.seqlen_k) {
            let row = ((b * problem.shape.seqlen_k + j) * h) * d;
            for x in &mut inputs.k[row..row + h * d] {
                *x = inputs.dtype.to_bits(inputs.dtype.from_bits(*x) * factor);
            }
        }
    }
}

/// Scores that jump by about 8-15 (log2 units) a quarter of the way along the keys: above
/// the lazy rescale's threshold, under the overflow limit of f16's P.
pub fn moderate_score_jump(problem: &Problem, inputs: &mut HostInputs) {
    let at = problem.shape.seqlen_k / 4;
    scale_keys(problem, inputs, at..at + 64, 2.5);
}

/// Scores that jump by about 200 (log2 units) halfway along the keys: P against the
/// earlier max would overflow in any dtype.
pub fn steep_score_jump(problem: &Problem, inputs: &mut HostInputs) {
    let at = problem.shape.seqlen_k / 2;
    scale_keys(problem, inputs, at..at + 64, 40.0);
}

/// A fresh seed for each check unless the user pins one (`--seed`).
pub fn fresh_seed() -> u64 {
    rand::rng().random()
}

/// Normal(MEAN, STD_DEV) samples rounded to `dtype`, generated in parallel chunks whose
/// streams depend only on (seed, chunk index), so a seed always gives the same tensor.
pub(crate) fn normal_bits(n: usize, dtype: DType, seed: u64) -> Vec<u16> {
    const CHUNK: usize = 1 << 16;
    let normal = Normal::new(MEAN, STD_DEV).expect("a finite, positive standard deviation");
    let mut out = vec![0u16; n];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut rng = StdRng::seed_from_u64(
                seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .wrapping_add(i as u64),
            );
            for slot in chunk {
                *slot = dtype.to_bits(normal.sample(&mut rng));
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_seeded_and_not_zero_mean() {
        let p = Problem::new(1, 2, 1000, 64);
        let a = HostInputs::generate(&p, 7);
        let b = HostInputs::generate(&p, 7);
        let c = HostInputs::generate(&p, 8);
        assert_eq!(a.q, b.q);
        assert_ne!(a.q, c.q);
        assert_ne!(a.q, a.k, "Q and K must be drawn independently");
        // 128000 elements span two parallel chunks: each has its own stream.
        assert_ne!(a.q[..1000], a.q[1 << 16..(1 << 16) + 1000]);
        let q = a.to_f64(&a.q);
        let mean = q.iter().sum::<f64>() / q.len() as f64;
        let var = q.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / q.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
        assert!((var.sqrt() - 1.0).abs() < 0.02, "std {}", var.sqrt());
    }

    /// Without `--seed`, each check draws its own inputs.
    #[test]
    fn fresh_seeds_differ() {
        assert_ne!(fresh_seed(), fresh_seed());
    }

    #[test]
    fn values_are_exactly_representable_in_the_dtype() {
        let p = Problem {
            dtype: DType::F16,
            ..Problem::new(1, 1, 64, 64)
        };
        let inputs = HostInputs::generate(&p, 1);
        for &bits in &inputs.v {
            let x = DType::F16.from_bits(bits);
            assert_eq!(DType::F16.to_bits(x), bits);
            assert!(x.is_finite());
        }
    }
}
