//! The harness's typed errors: each says what went wrong and what is supported.

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

    /// Occurs when a stage needs a newer GPU than the one present.
    #[error(
        "stage {stage} needs compute capability {need_major}.{need_minor} or newer; this GPU ({gpu}) is {have_major}.{have_minor}"
    )]
    ComputeCapability {
        stage: String,
        gpu: String,
        need_major: u32,
        need_minor: u32,
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

    /// Occurs when a kernel writes NaN or leaves outputs unwritten, or its error exceeds
    /// the tolerance.
    #[error("check failed: {0}")]
    CheckFailed(String),

    /// Occurs when a CUDA driver call or a kernel launch fails.
    #[error("CUDA error during {during}: {source}")]
    Cuda {
        during: String,
        source: cudarc::driver::DriverError,
    },

    /// Occurs when cuBLAS fails (only `flashlab info` uses it).
    #[error("cuBLAS error: {0}")]
    Cublas(String),
}

/// Attaches what the harness was doing to a driver error.
pub(crate) trait CudaContext<T> {
    fn during(self, what: impl Into<String>) -> Result<T>;
}

impl<T> CudaContext<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn during(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Cuda {
            during: what.into(),
            source,
        })
    }
}
