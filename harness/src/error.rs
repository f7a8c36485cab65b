//! The harness's typed errors: each says what went wrong and what is supported.
//!
//! Each message is whole: it carries the driver's error in its own text rather than as a
//! `source()`, so it reads the same printed alone (a bench row's reason, a GPU test's
//! failure list) or at the end of the CLI's chain of contexts.

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Occurs when no CUDA driver or no GPU can be opened.
    #[error(
        "no NVIDIA GPU found: {reason}. flashlab's kernels need an NVIDIA GPU with compute capability 8.0 or newer and its driver; the CPU tests (`just test`) run without one"
    )]
    NoGpu { reason: String },

    /// Occurs when a stage was built without nvcc, so it carries no kernels.
    #[error(
        "stage {stage}'s kernels were not compiled: {reason}\nInstall the pinned compiler with `just cuda` (or set NVCC / CUDA_HOME), then rebuild"
    )]
    NotCompiled { stage: String, reason: String },

    /// Occurs when a stage's kernels are not built for the GPU present (too old, or not
    /// the one architecture a Hopper stage is built for).
    #[error(
        "stage {stage} needs {needs}; this GPU ({gpu}) has compute capability {have_major}.{have_minor}"
    )]
    WrongGpu {
        stage: String,
        gpu: String,
        needs: &'static str,
        have_major: u32,
        have_minor: u32,
    },

    /// Occurs when a problem is not valid for any stage (zero sizes, heads not divisible).
    #[error("invalid problem: {0}")]
    InvalidProblem(String),

    /// Occurs when a stage does not support a valid problem's head dim or dtype.
    #[error("stage {stage} does not support {what}; it supports {supported}")]
    Unsupported {
        stage: String,
        what: String,
        supported: String,
    },

    /// Occurs when a timeline is asked of a stage whose kernels have no timeline variants
    /// (`StageInfo::timeline`); `with_timeline` names the stages that do, when the caller
    /// knows them (the CLI passes the stage table).
    #[error("stage {stage} has no timeline kernels{}", stages_with_one(.with_timeline))]
    NoTimeline {
        stage: String,
        with_timeline: Vec<u32>,
    },

    /// Occurs when a timeline buffer does not read as `timeline.cuh` writes it.
    #[error("the timeline buffer does not read as timeline.cuh writes it: {0}")]
    BadTimeline(String),

    /// Occurs when the GPU has not the memory a run needs: found before allocating (the
    /// run's total against the free memory) or reported by the driver on an allocation.
    #[error(
        "out of GPU memory {during}: {} requested{}; a smaller batch, fewer heads or shorter sequences need less",
        gib(*.requested_bytes),
        free_of_total(*.free_bytes, *.total_bytes)
    )]
    OutOfMemory {
        /// What was being allocated, e.g. `allocating the workspace`.
        during: String,
        requested_bytes: usize,
        /// Free and total device memory when the allocation failed; `None` when the
        /// driver could not say.
        free_bytes: Option<usize>,
        total_bytes: Option<usize>,
    },

    /// Occurs when a launch asks for more shared memory per block, static and dynamic
    /// together, than the GPU allows.
    #[error(
        "kernel {kernel} needs {} bytes of shared memory per block ({static_bytes} static + {dynamic_bytes} dynamic); this GPU allows at most {limit_bytes} bytes per block",
        *.static_bytes as u64 + *.dynamic_bytes as u64
    )]
    SharedMemoryOverLimit {
        kernel: String,
        static_bytes: u32,
        dynamic_bytes: u32,
        limit_bytes: u32,
    },

    /// Occurs when a launch's block size differs from the kernel's `__launch_bounds__`:
    /// every kernel is exported with `__launch_bounds__(threads, 1)` and written for
    /// exactly that many threads, so any other block size is a bug in the launch code.
    #[error(
        "kernel {kernel} was launched with {launch_threads} threads per block (block {block:?}), but it is compiled with __launch_bounds__({launch_bounds}) and is written for exactly that many"
    )]
    BlockSizeMismatch {
        kernel: String,
        block: (u32, u32, u32),
        launch_threads: u64,
        launch_bounds: u32,
    },

    /// Occurs when a CUDA driver call or a kernel launch fails.
    #[error("CUDA error during {during}: {driver}")]
    Cuda { during: String, driver: DriverError },

    /// Occurs when cuBLAS fails (only the speed-of-light measurement uses it).
    #[error("cuBLAS error: {0}")]
    Cublas(String),
}

/// `3.00 GiB`: how every memory message says sizes.
pub(crate) fn gib(bytes: usize) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn stages_with_one(numbers: &[u32]) -> String {
    if numbers.is_empty() {
        return String::new();
    }
    let numbers: Vec<String> = numbers.iter().map(u32::to_string).collect();
    format!("; stages with one: {}", numbers.join(", "))
}

fn free_of_total(free: Option<usize>, total: Option<usize>) -> String {
    match (free, total) {
        (Some(free), Some(total)) => format!(", {} of {} free", gib(free), gib(total)),
        (Some(free), None) => format!(", {} free", gib(free)),
        _ => String::new(),
    }
}

/// Attaches what the harness was doing to a driver error.
pub(crate) trait CudaContext<T> {
    fn during(self, what: impl Into<String>) -> Result<T>;

    /// Like [`during`](CudaContext::during) for an allocation of `bytes`: the driver's
    /// out-of-memory error becomes [`Error::OutOfMemory`], with what `context`'s GPU has
    /// free.
    fn allocating(
        self,
        context: &cudarc::driver::CudaContext,
        bytes: usize,
        what: impl Into<String>,
    ) -> Result<T>;
}

impl<T> CudaContext<T> for std::result::Result<T, DriverError> {
    fn during(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|driver| Error::Cuda {
            during: what.into(),
            driver,
        })
    }

    fn allocating(
        self,
        context: &cudarc::driver::CudaContext,
        bytes: usize,
        what: impl Into<String>,
    ) -> Result<T> {
        self.map_err(|driver| {
            if driver.0 != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                return Error::Cuda {
                    during: what.into(),
                    driver,
                };
            }
            let (free, total) = context.mem_get_info().ok().unzip();
            Error::OutOfMemory {
                during: what.into(),
                requested_bytes: bytes,
                free_bytes: free,
                total_bytes: total,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_says_how_much_was_asked_and_what_was_free() {
        let err = Error::OutOfMemory {
            during: "allocating the workspace".into(),
            requested_bytes: 3 << 30,
            free_bytes: Some(1 << 30),
            total_bytes: Some(80 << 30),
        };
        assert_eq!(
            err.to_string(),
            "out of GPU memory allocating the workspace: 3.00 GiB requested, 1.00 GiB of 80.00 GiB free; a smaller batch, fewer heads or shorter sequences need less"
        );
        let unknown = Error::OutOfMemory {
            during: "allocating O".into(),
            requested_bytes: 1 << 29,
            free_bytes: None,
            total_bytes: None,
        };
        assert!(
            unknown
                .to_string()
                .starts_with("out of GPU memory allocating O: 0.50 GiB requested; "),
            "{unknown}"
        );
    }

    #[test]
    fn shared_memory_over_the_limit_names_the_kernel_and_both_parts() {
        let err = Error::SharedMemoryOverLimit {
            kernel: "cp_async_w4m2k64s3_bf16_d128".into(),
            static_bytes: 1024,
            dynamic_bytes: 233_472,
            limit_bytes: 232_448,
        };
        assert_eq!(
            err.to_string(),
            "kernel cp_async_w4m2k64s3_bf16_d128 needs 234496 bytes of shared memory per block (1024 static + 233472 dynamic); this GPU allows at most 232448 bytes per block"
        );
    }

    #[test]
    fn a_block_size_mismatch_names_both_sizes() {
        let err = Error::BlockSizeMismatch {
            kernel: "swizzle_f16_d64".into(),
            block: (128, 2, 1),
            launch_threads: 256,
            launch_bounds: 128,
        };
        assert_eq!(
            err.to_string(),
            "kernel swizzle_f16_d64 was launched with 256 threads per block (block (128, 2, 1)), but it is compiled with __launch_bounds__(128) and is written for exactly that many"
        );
    }
}
