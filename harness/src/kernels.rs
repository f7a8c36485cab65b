//! A stage's compiled kernels: the embedded fatbin, its ptxas report, and loading it.

use crate::error::CudaContext as _;
use crate::{DType, Error, KernelResources, Result};
use cudarc::driver::{CudaFunction, CudaModule};
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
    /// Loaded modules, one per CUDA context (keyed by the context's address).
    pub modules: Mutex<Vec<(usize, Arc<CudaModule>)>>,
}

/// Embeds the fatbin, report and status that the stage's `build.rs` wrote to `OUT_DIR`.
#[macro_export]
macro_rules! include_kernels {
    () => {
        $crate::KernelBundle {
            crate_name: env!("CARGO_PKG_NAME"),
            fatbin: include_bytes!(concat!(env!("OUT_DIR"), "/kernels.fatbin")),
            ptxas_report: include_str!(concat!(env!("OUT_DIR"), "/ptxas-report.txt")),
            status: include_str!(concat!(env!("OUT_DIR"), "/nvcc-status.txt")),
            modules: std::sync::Mutex::new(Vec::new()),
        }
    };
}

/// The exported name of a kernel variant: `<prefix>_<dtype>_d<head_dim>` (see
/// `FLASHLAB_EXPORT` in `common.cuh`).
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

    /// One record per (kernel, architecture) from the ptxas report.
    pub fn resources(&self) -> Vec<KernelResources> {
        kernel_build::parse_ptxas_report(self.ptxas_report)
    }

    /// Loads the fatbin into `gpu`'s context once and returns the named kernel.
    pub fn function(&self, gpu: &crate::Gpu, name: &str) -> Result<CudaFunction> {
        if let Some(reason) = self.not_compiled_reason() {
            return Err(Error::NotCompiled {
                stage: self.crate_name.to_string(),
                reason,
            });
        }
        let key = Arc::as_ptr(gpu.context()) as usize;
        let module = {
            let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
            match modules.iter().find(|(k, _)| *k == key) {
                Some((_, m)) => m.clone(),
                None => {
                    let image = cudarc::nvrtc::Ptx::from_binary(self.fatbin.to_vec());
                    let m = gpu
                        .context()
                        .load_module(image)
                        .during(format!("loading {}'s fatbin", self.crate_name))?;
                    modules.push((key, m.clone()));
                    m
                }
            }
        };
        module
            .load_function(name)
            .during(format!("looking up kernel {name} in {}", self.crate_name))
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
