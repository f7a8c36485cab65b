//! What a stage is: a row of the stage table plus how to launch its kernels.

use crate::{AttnParams, DType, Error, Gpu, KernelBundle, Problem, Result};

/// One row of the stage table. `flashlab list`, the just recipes, the bench and the book
/// checks all read these, so a stage is described exactly once.
pub struct StageInfo {
    /// Its place in the ladder: `just stage 2`.
    pub number: u32,
    /// Short name, also the kernel prefix and the book chapter's file stem.
    pub slug: &'static str,
    /// The one idea this stage adds over the previous one.
    pub idea: &'static str,
    pub min_compute_capability: (u32, u32),
    pub head_dims: &'static [usize],
    pub dtypes: &'static [DType],
    pub kernels: &'static KernelBundle,
}

impl StageInfo {
    /// `2 (online-softmax)`, for messages.
    pub fn label(&self) -> String {
        format!("{} ({})", self.number, self.slug)
    }

    /// Refuses head dims and dtypes the stage was not written for, naming what it supports.
    pub fn validate(&self, p: &Problem) -> Result<()> {
        p.validate()?;
        if !self.head_dims.contains(&p.shape.head_dim) {
            return Err(Error::Unsupported {
                stage: self.label(),
                what: format!("head dim {}", p.shape.head_dim),
                supported: format!("head dims {:?}", self.head_dims),
            });
        }
        if !self.dtypes.contains(&p.dtype) {
            let names: Vec<_> = self.dtypes.iter().map(|d| d.name()).collect();
            return Err(Error::Unsupported {
                stage: self.label(),
                what: format!("dtype {}", p.dtype),
                supported: names.join(", "),
            });
        }
        Ok(())
    }
}

/// The device buffers of one run, as the kernels see them.
pub struct LaunchArgs {
    pub problem: Problem,
    pub params: AttnParams,
}

/// A rung of the ladder. Implementations hold no state: the kernels are in `info().kernels`.
pub trait Stage: Sync {
    fn info(&self) -> &'static StageInfo;

    /// fp32 elements of device workspace the stage needs (stage 1 materializes S).
    fn scratch_elements(&self, _problem: &Problem) -> usize {
        0
    }

    /// Queues the stage's kernel(s) on `gpu`'s stream. The harness checks for errors.
    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()>;

    /// Register-spill bytes (stores + loads, from the ptxas report) that `kernel` may have.
    /// Zero for every kernel unless a stage explains, where it overrides this, why a spill
    /// measured faster than the spill-free alternatives. `tests/kernels.rs` enforces it.
    fn tolerated_spill_bytes(&self, _kernel: &str) -> u32 {
        0
    }
}
