//! The GPU: opening a context with a clear error when there is none, device facts,
//! launching a kernel with its one `AttnParams` argument, and the practical speed of light.

use crate::error::CudaContext as _;
use crate::kernels::{Kernel, KernelBundle};
use crate::tensor_map::AttnTensorMaps;
use crate::{AttnParams, Error, Result};
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaStream, LaunchConfig, PushKernelArg};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// An open CUDA context on one GPU, with the one stream the harness uses for everything.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pub name: String,
    pub compute_capability: (u32, u32),
    pub multiprocessors: u32,
    pub max_smem_per_block: u32,
}

/// Facts about the GPU that `flashlab info` prints and every bench run records in its
/// header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceFacts {
    pub name: String,
    pub compute_capability: String,
    pub multiprocessors: u32,
    pub memory_gib: f64,
    /// 0 in bench files written before it was recorded.
    #[serde(default)]
    pub max_smem_per_block_kib: u32,
    pub l2_mib: f64,
    pub sm_clock_mhz: u32,
    pub memory_clock_mhz: u32,
    pub driver_version: String,
}

impl Gpu {
    /// Opens GPU `FLASHLAB_DEVICE` (default 0), or says why it cannot.
    pub fn open() -> Result<Gpu> {
        // cudarc loads libcuda lazily and panics if it is missing; ask first.
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoGpu {
                reason: "the NVIDIA driver library (libcuda.so) is not installed".into(),
            });
        }
        let count = CudaContext::device_count().map_err(|e| Error::NoGpu {
            reason: format!("the driver reports {e}"),
        })?;
        let ordinal: usize = std::env::var("FLASHLAB_DEVICE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if count <= 0 {
            return Err(Error::NoGpu {
                reason: "the driver sees no CUDA device".into(),
            });
        }
        if ordinal >= count as usize {
            return Err(Error::NoGpu {
                reason: format!("FLASHLAB_DEVICE={ordinal} but the driver sees {count} device(s)"),
            });
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoGpu {
            reason: format!("could not open device {ordinal}: {e}"),
        })?;
        // One stream for everything, so cudarc's cross-stream event tracking is only cost.
        // SAFETY: the harness never shares buffers between streams.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let attr = |a| ctx.attribute(a).during("reading device attributes");
        let (major, minor) = ctx
            .compute_capability()
            .during("reading the compute capability")?;
        Ok(Gpu {
            name: ctx.name().during("reading the device name")?,
            compute_capability: (major as u32, minor as u32),
            multiprocessors: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
                as u32,
            max_smem_per_block: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )? as u32,
            ctx,
            stream,
        })
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits for all queued work and surfaces any asynchronous kernel error.
    pub fn synchronize(&self, during: &str) -> Result<()> {
        self.stream.synchronize().during(during)
    }

    /// Launches `kernel(params)` after checking the launch against the kernel: its block
    /// size must be the kernel's `__launch_bounds__`, and its shared memory must fit.
    /// Dynamic shared memory past 48 KiB must be opted into per function; doing it here
    /// keeps every stage's launch code to grid, block and bytes.
    pub fn launch(
        &self,
        kernel: &Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        smem_bytes: u32,
        params: &AttnParams,
    ) -> Result<()> {
        self.launch_with_maps(kernel, grid, block, smem_bytes, params, None)
    }

    /// [`Gpu::launch`] for the kernels that also take Q's, K's, V's and O's tensor maps
    /// (the TMA stages: `FLASHLAB_EXPORT_ALL_TMA` in `tma.cuh`).
    pub fn launch_with_maps(
        &self,
        kernel: &Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        smem_bytes: u32,
        params: &AttnParams,
        maps: Option<&AttnTensorMaps>,
    ) -> Result<()> {
        let cfg = self.checked_config(kernel, grid, block, smem_bytes)?;
        let mut builder = self.stream.launch_builder(kernel.function());
        builder.arg(params);
        if let Some(maps) = maps {
            builder.arg(maps);
        }
        // SAFETY: every kernel takes one AttnParams by value, and the TMA kernels the four
        // tensor maps after it (the caller passes them for those kernels alone); the
        // harness keeps the buffers they name alive until the stream is synchronized.
        unsafe { builder.launch(cfg) }.during(format!(
            "launching {} with grid {grid:?} block {block:?}",
            kernel.name()
        ))?;
        Ok(())
    }

    /// [`Gpu::launch`] for kernels whose one argument is another struct: the decode
    /// kernels' `DecodeParams` ([`crate::decode`]).
    pub fn launch_with<P: cudarc::driver::DeviceRepr>(
        &self,
        kernel: &Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        smem_bytes: u32,
        params: &P,
    ) -> Result<()> {
        let cfg = self.checked_config(kernel, grid, block, smem_bytes)?;
        let mut builder = self.stream.launch_builder(kernel.function());
        builder.arg(params);
        // SAFETY: the caller passes the one struct the kernel takes by value; the buffers
        // it names stay alive until the stream is synchronized.
        unsafe { builder.launch(cfg) }.during(format!(
            "launching {} with grid {grid:?} block {block:?}",
            kernel.name()
        ))?;
        Ok(())
    }

    /// [`Gpu::launch_with`] for kernels that take a second struct after the first: the Hopper
    /// backward's main kernel, its `BwdParams` and then its tensor maps
    /// ([`crate::tensor_map::BackwardTensorMaps`]).
    pub fn launch_with_extra<P: cudarc::driver::DeviceRepr, M: cudarc::driver::DeviceRepr>(
        &self,
        kernel: &Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        smem_bytes: u32,
        params: &P,
        extra: &M,
    ) -> Result<()> {
        let cfg = self.checked_config(kernel, grid, block, smem_bytes)?;
        let mut builder = self.stream.launch_builder(kernel.function());
        builder.arg(params);
        builder.arg(extra);
        // SAFETY: the caller passes the two structs the kernel takes by value, in its order;
        // the buffers they name stay alive until the stream is synchronized.
        unsafe { builder.launch(cfg) }.during(format!(
            "launching {} with grid {grid:?} block {block:?}",
            kernel.name()
        ))?;
        Ok(())
    }

    /// The launch's configuration, after checking it against the kernel: its block size
    /// must be the kernel's `__launch_bounds__`, and its shared memory must fit.
    fn checked_config(
        &self,
        kernel: &Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        smem_bytes: u32,
    ) -> Result<LaunchConfig> {
        // The bound was read when the kernel was loaded: this costs no driver call.
        let threads = u64::from(block.0) * u64::from(block.1) * u64::from(block.2);
        if threads != u64::from(kernel.max_threads_per_block()) {
            return Err(Error::BlockSizeMismatch {
                kernel: kernel.name().to_string(),
                block,
                launch_threads: threads,
                launch_bounds: kernel.max_threads_per_block(),
            });
        }
        self.allow_smem(kernel, smem_bytes)?;
        Ok(LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes: smem_bytes,
        })
    }

    /// The driver's count of `kernel`'s blocks that fit on one SM at once, with its launch's
    /// block size and dynamic shared memory (registers, shared memory and block limits).
    /// The shared memory is allowed first, as for a launch: past 48 KiB the driver counts
    /// only what the kernel has been allowed.
    pub fn resident_blocks(&self, kernel: &Kernel, threads: u32, smem_bytes: u32) -> Result<u32> {
        self.allow_smem(kernel, smem_bytes)?;
        let blocks = kernel
            .occupancy_max_active_blocks_per_multiprocessor(threads, smem_bytes as usize, None)
            .during(format!("reading {}'s occupancy", kernel.name()))?;
        Ok(blocks.max(1))
    }

    /// Shared memory past 48 KiB a block (static and dynamic together) must be opted into
    /// per function.
    fn allow_smem(&self, kernel: &Kernel, smem_bytes: u32) -> Result<()> {
        let total = u64::from(kernel.static_smem_bytes()) + u64::from(smem_bytes);
        if total > u64::from(self.max_smem_per_block) {
            return Err(Error::SharedMemoryOverLimit {
                kernel: kernel.name().to_string(),
                static_bytes: kernel.static_smem_bytes(),
                dynamic_bytes: smem_bytes,
                limit_bytes: self.max_smem_per_block,
            });
        }
        if total > 48 * 1024 {
            kernel
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    smem_bytes as i32,
                )
                .during("raising the dynamic shared-memory limit")?;
        }
        Ok(())
    }

    pub fn facts(&self) -> Result<DeviceFacts> {
        let attr = |a| self.ctx.attribute(a).during("reading device attributes");
        let mut version = 0;
        // SAFETY: writes one int; the driver library is loaded (a context is open).
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
            .result()
            .during("reading the driver version")?;
        let driver = format!("{}.{}", version / 1000, (version % 1000) / 10);
        Ok(DeviceFacts {
            name: self.name.clone(),
            compute_capability: format!(
                "{}.{}",
                self.compute_capability.0, self.compute_capability.1
            ),
            multiprocessors: self.multiprocessors,
            memory_gib: self.ctx.total_mem().during("reading total memory")? as f64
                / (1u64 << 30) as f64,
            max_smem_per_block_kib: self.max_smem_per_block / 1024,
            l2_mib: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as f64
                / (1u64 << 20) as f64,
            sm_clock_mhz: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as u32 / 1000,
            memory_clock_mhz: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?
                as u32
                / 1000,
            driver_version: driver,
        })
    }
}

impl KernelBundle {
    /// Loads the fatbin into `gpu`'s context once and returns the named kernel, looked up
    /// once per context ([`KernelBundle::load`]).
    pub fn function(&self, gpu: &Gpu, name: &str) -> Result<Kernel> {
        self.load(gpu.context(), name)
    }
}
