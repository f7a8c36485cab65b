//! The backward workload: dQ, dK and dV from dO, the way FlashAttention's backward kernels
//! compute them from the forward's saved outputs.
//!
//! A run draws Q, K, V and dO, runs the forward stage the backward builds on
//! ([`BackwardStage::forward`]) for O and the LSE, poisons dQ, dK and dV with NaN, runs the
//! backward ([`BackwardStage::launch_backward`]: preprocess, main and postprocess kernels),
//! checks every element was written and the gradients against `reference`'s f64 backward
//! under FlashAttention-3's rule ([`check`]), and times the backward alone.
//!
//! The backward's FLOPs are 2.5 times the forward's ([`backward_flops`]): five products of
//! the same size (S = Q Kᵀ again, dP = dO Vᵀ, dV = Pᵀ dO, dK = dSᵀ Q, dQ = dS K) against
//! the forward's two.

pub mod check;
pub mod launch;
pub mod params;
pub mod run;
pub mod testing;

pub use launch::{ThreeKernels, launch_three};
pub use params::{BackwardArgs, BwdParams};

use crate::Problem;

/// The backward's FLOP count: `10 · batch · heads · head_dim · visible pairs`, five products
/// of `2 · head_dim` FLOPs per visible (query, key) pair, 2.5 times the forward's four
/// ([`Problem::flops`]). The recomputed S is counted: it is work the kernel does.
pub fn backward_flops(problem: &Problem) -> f64 {
    2.5 * problem.flops()
}

/// Query rows per semaphore slot of the deterministic order: the buffer holds
/// `batch · heads · ceil(seqlen_q / 16)` counters, one per query block of any stage whose
/// query blocks are a multiple of 16 rows.
pub const SEMAPHORE_ROWS: usize = 16;

/// Query rows of dQ's fp32 accumulator are padded to a multiple of this, so a stage may lay
/// it out as `[batch, heads, seqlen_q rounded up, head_dim]` and add a whole query block of
/// rows with one bulk copy, the last block included.
pub const DQ_ACCUM_ROWS: usize = 128;

/// fp32 elements of dQ's accumulator: `batch · heads · (seqlen_q rounded up to
/// [`DQ_ACCUM_ROWS`]) · head_dim`. Its layout within is the stage's.
pub fn dq_accum_elements(problem: &Problem) -> usize {
    let s = &problem.shape;
    s.batch * s.heads * s.seqlen_q.next_multiple_of(DQ_ACCUM_ROWS) * s.head_dim
}
