//! A stage's compiled kernels: the embedded fatbin, its ptxas report and SASS counts, and
//! loading it.

use crate::error::CudaContext as _;
use crate::{DType, Error, KernelResources, Result};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What `kernel-build` produced for one stage crate, embedded at compile time by
/// [`include_kernels!`](crate::include_kernels).
pub struct KernelBundle {
    pub crate_name: &'static str,
    /// Empty when the stage was built without nvcc.
    pub fatbin: &'static [u8],
    /// nvcc's stderr, including the `-Xptxas -v` lines.
    pub ptxas_report: &'static str,
    /// `nvcc <path>`/version/archs, or `no-nvcc` and the reason.
    pub status: &'static str,
    /// The tensor-core instructions per kernel in the fatbin's SASS, or `unavailable:` and
    /// the reason (`kernel_build::parse_sass_counts` reads it).
    pub sass_counts: &'static str,
    /// The fatbin loaded into each CUDA context, and the kernels looked up in it.
    pub loaded: Mutex<Vec<LoadedModule>>,
}

/// The bundle's module in one CUDA context (keyed by the context's address), with every
/// kernel looked up so far: a launch finds its kernel here without a driver call.
pub struct LoadedModule {
    context: usize,
    module: Arc<CudaModule>,
    kernels: Vec<Kernel>,
}

/// A kernel loaded into one context, with the facts a launch is checked against
/// ([`Gpu::launch`](crate::Gpu::launch)), read once when it is first looked up.
///
/// It dereferences to cudarc's `CudaFunction`, so kernels with their own argument lists
/// (the harness's ceilings and timing gate, a stage's probe kernels) go to
/// `CudaStream::launch_builder` as they are.
#[derive(Clone, Debug)]
pub struct Kernel {
    name: Arc<str>,
    function: CudaFunction,
    max_threads_per_block: u32,
    static_smem_bytes: u32,
}

impl Kernel {
    /// The exported name, e.g. `swizzle_bf16_d128`.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`: for a kernel exported with
    /// `__launch_bounds__(threads, 1)` (every `FLASHLAB_EXPORT_WITH`), exactly `threads`.
    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads_per_block
    }

    /// Its `__shared__` arrays; dynamic shared memory comes on top, chosen at launch.
    pub fn static_smem_bytes(&self) -> u32 {
        self.static_smem_bytes
    }
}

impl std::ops::Deref for Kernel {
    type Target = CudaFunction;
    fn deref(&self) -> &CudaFunction {
        &self.function
    }
}

/// The harness's own kernels: the ceilings [`crate::sol`] measures
/// (`harness/kernels/ceilings.cu`) and the gate [`crate::timing`] queues its launches
/// behind (`harness/kernels/spin.cu`). Here, below both, so that timing does not depend on
/// the speed of light (which is timed with it).
pub static HARNESS_KERNELS: KernelBundle = crate::include_kernels!();

/// Embeds the fatbin, report, status and SASS counts that the stage's `build.rs` wrote to
/// `OUT_DIR`.
#[macro_export]
macro_rules! include_kernels {
    () => {
        $crate::KernelBundle {
            crate_name: env!("CARGO_PKG_NAME"),
            fatbin: include_bytes!(concat!(env!("OUT_DIR"), "/kernels.fatbin")),
            ptxas_report: include_str!(concat!(env!("OUT_DIR"), "/ptxas-report.txt")),
            status: include_str!(concat!(env!("OUT_DIR"), "/nvcc-status.txt")),
            sass_counts: include_str!(concat!(env!("OUT_DIR"), "/sass-counts.txt")),
            loaded: std::sync::Mutex::new(Vec::new()),
        }
    };
}

/// Why [`KernelBundle::sass_listing`] has no listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SassListingError {
    /// The stage was built without kernels (the reason).
    NoKernels(String),
    /// No cuobjdump was found.
    NoCuobjdump,
    /// cuobjdump ran and failed, or its input could not be written.
    Failed(String),
}

impl std::fmt::Display for SassListingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoKernels(reason) => write!(f, "no kernels were compiled: {reason}"),
            Self::NoCuobjdump => f.write_str(
                "cuobjdump not found: set CUOBJDUMP=/path/to/cuobjdump, or put the CUDA toolkit's bin on PATH (`just cuda` installs one into .toolchain/cuda/nvidia/cu13/bin)",
            ),
            Self::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for SassListingError {}

/// cuobjdump for a bundle whose status names the nvcc that built it: `$CUOBJDUMP` or the
/// one beside that nvcc (as the build found it), else the first on `$PATH`, in
/// `$CUDA_HOME/bin` or in `/usr/local/cuda/bin` (a GPU machine running the bundle).
fn find_cuobjdump(status: &str) -> Option<std::path::PathBuf> {
    let nvcc = status.lines().next().and_then(|l| l.strip_prefix("nvcc "));
    if let Some(found) = nvcc.and_then(|n| kernel_build::find_cuobjdump(n.as_ref())) {
        return Some(found);
    }
    let mut dirs: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        dirs.push(std::path::PathBuf::from(home).join("bin"));
    }
    dirs.push("/usr/local/cuda/bin".into());
    dirs.into_iter()
        .map(|d| d.join("cuobjdump"))
        .find(|p| p.is_file())
}

/// The exported name of a kernel variant: `<prefix>_<dtype>_d<head_dim>` (see
/// `FLASHLAB_EXPORT_WITH` in `common.cuh`).
pub fn kernel_name(prefix: &str, dtype: DType, head_dim: usize) -> String {
    format!("{prefix}_{}_d{head_dim}", dtype.name())
}

impl KernelBundle {
    pub fn compiled(&self) -> bool {
        !self.fatbin.is_empty()
    }

    /// Why the kernels are missing, when they are.
    pub fn not_compiled_reason(&self) -> Option<String> {
        (!self.compiled()).then(|| {
            let mut lines = self.status.lines();
            lines.next();
            lines
                .next()
                .unwrap_or("no nvcc was found when the stage was built")
                .to_string()
        })
    }

    /// One record per (kernel, architecture) from the ptxas report, with its tensor-core
    /// instruction counts from the SASS (`None` when [`Self::sass_counts_unavailable`]).
    pub fn resources(&self) -> Vec<KernelResources> {
        let mut resources = kernel_build::parse_ptxas_report(self.ptxas_report);
        kernel_build::add_sass_counts(&mut resources, self.sass_counts);
        resources
    }

    /// Why the kernels' tensor-core instructions were not counted, when they were not
    /// (no kernels, or no cuobjdump beside nvcc when the stage was built).
    pub fn sass_counts_unavailable(&self) -> Option<String> {
        kernel_build::parse_sass_counts(self.sass_counts).err()
    }

    /// The fatbin's `cuobjdump -sass` listing, or why there is none.
    pub fn sass_listing(&self) -> std::result::Result<String, SassListingError> {
        if let Some(reason) = self.not_compiled_reason() {
            return Err(SassListingError::NoKernels(reason));
        }
        let cuobjdump = find_cuobjdump(self.status).ok_or(SassListingError::NoCuobjdump)?;
        // A file of its own for each call: tests list the same bundle from several threads.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let fatbin = std::env::temp_dir().join(format!(
            "flashlab-{}-{}-{call}.fatbin",
            self.crate_name,
            std::process::id()
        ));
        std::fs::write(&fatbin, self.fatbin).map_err(|e| {
            SassListingError::Failed(format!("could not write {}: {e}", fatbin.display()))
        })?;
        let listing = kernel_build::sass_listing(&cuobjdump, &fatbin);
        let _ = std::fs::remove_file(&fatbin);
        listing.map_err(SassListingError::Failed)
    }

    /// Loads the fatbin into `context` once and returns the named kernel, looked up once
    /// per context. Stages call it through [`KernelBundle::function`], with their `Gpu`.
    pub fn load(&self, context: &Arc<CudaContext>, name: &str) -> Result<Kernel> {
        if let Some(reason) = self.not_compiled_reason() {
            return Err(Error::NotCompiled {
                stage: self.crate_name.to_string(),
                reason,
            });
        }
        let key = Arc::as_ptr(context) as usize;
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let index = match loaded.iter().position(|l| l.context == key) {
            Some(i) => i,
            None => {
                let image = cudarc::nvrtc::Ptx::from_binary(self.fatbin.to_vec());
                let module = context
                    .load_module(image)
                    .during(format!("loading {}'s fatbin", self.crate_name))?;
                loaded.push(LoadedModule {
                    context: key,
                    module,
                    kernels: Vec::new(),
                });
                loaded.len() - 1
            }
        };
        let entry = &mut loaded[index];
        if let Some(kernel) = entry.kernels.iter().find(|k| k.name() == name) {
            return Ok(kernel.clone());
        }
        let function = entry
            .module
            .load_function(name)
            .during(format!("looking up kernel {name} in {}", self.crate_name))?;
        let attribute = |a, what: &str| {
            function
                .get_attribute(a)
                .during(format!("reading kernel {name}'s {what}"))
                .map(|v| v as u32)
        };
        let kernel = Kernel {
            name: name.into(),
            max_threads_per_block: attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                "maximum threads per block",
            )?,
            static_smem_bytes: attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                "static shared memory",
            )?,
            function,
        };
        entry.kernels.push(kernel.clone());
        Ok(kernel)
    }
}

/// Counts kernels per name, for tests that every exported variant was compiled.
pub fn kernels_by_arch(resources: &[KernelResources]) -> HashMap<String, Vec<String>> {
    let mut map: HashMap<String, Vec<String>> = HashMap::new();
    for r in resources {
        map.entry(r.arch.clone())
            .or_default()
            .push(r.kernel.clone());
    }
    map
}
