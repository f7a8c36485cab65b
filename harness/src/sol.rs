//! The practical speed of light on this GPU, measured rather than read off a datasheet:
//! a large device-to-device copy (bytes read + written per second) and a large cuBLAS
//! bf16 matrix product (TFLOP/s). The roofline in the book and "% of SOL" in the bench
//! divide by these.
//!
//! Two more ceilings belong to the mma.sync stages (3-5), from `kernels/ceilings.cu`: the
//! rate of `mma.sync.m16n8k16` alone (on Hopper well below cuBLAS, which uses wgmma), and
//! the rate at which cp.async moves tiles from L2 into shared memory.

use crate::error::CudaContext as _;
use crate::kernels::HARNESS_KERNELS;
use crate::timing::{TimingProtocol, gb_per_s, tflops, time, time_between};
use crate::{Error, Gpu, Result};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys::cublasOperation_t};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use serde::{Deserialize, Serialize};

/// What `flashlab info` prints and every bench run records in its header. Read back from
/// a `bench.json`, fields added after a file was written take their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedOfLight {
    /// Device-to-device copy, counting bytes read plus bytes written.
    pub copy_gb_per_s: f64,
    /// A streaming read of the same buffer (`ceiling_read`): the roofline of decode, which
    /// reads its K/V cache and writes almost nothing. `None` in bench files written before
    /// it was recorded, or without the harness's kernels.
    #[serde(default)]
    pub read_gb_per_s: Option<f64>,
    /// 0 in bench files written before it was recorded.
    #[serde(default)]
    pub copy_bytes: usize,
    /// cuBLAS bf16 GEMM (fp32 accumulation) on random data.
    pub gemm_tflops: Option<f64>,
    pub gemm_size: usize,
    /// Why the GEMM was not measured, when it was not.
    #[serde(default)]
    pub gemm_skipped: Option<String>,
    /// mma.sync.m16n8k16 bf16 (fp32 accumulate) with nothing else running: the tensor-core
    /// ceiling of the mma.sync stages (3-10).
    #[serde(default)]
    pub mma_sync_tflops: Option<f64>,
    /// cp.async from an L2-resident buffer into shared memory, 32 KiB tiles.
    #[serde(default)]
    pub l2_to_smem_tb_per_s: Option<f64>,
    /// Why the two ceilings above were not measured, when they were not.
    #[serde(default)]
    pub ceilings_skipped: Option<String>,
}

pub const COPY_BYTES: usize = 1 << 30;
pub const GEMM_SIZE: usize = 8192;

/// Measures every ceiling, each timed under `protocol`.
pub fn measure(gpu: &Gpu, protocol: TimingProtocol) -> Result<SpeedOfLight> {
    let stream = gpu.stream();
    let n = COPY_BYTES / 4;
    let host: Vec<u32> = random_u16(n).into_iter().map(u32::from).collect();
    let src = stream.clone_htod(&host).allocating(
        gpu.context(),
        COPY_BYTES,
        "allocating the copy's source",
    )?;
    let mut dst = stream.alloc_zeros::<u32>(n).allocating(
        gpu.context(),
        COPY_BYTES,
        "allocating the copy's destination",
    )?;
    // ANCHOR: copy
    let copy = time(gpu, protocol, || {
        stream
            .memcpy_dtod(&src, &mut dst)
            .during("device-to-device copy")
    })?;
    let copy_gb_per_s = gb_per_s(2.0 * COPY_BYTES as f64, copy.median_ms);
    // ANCHOR_END: copy
    drop(dst);
    let read_gb_per_s = match HARNESS_KERNELS.not_compiled_reason() {
        Some(_) => None,
        None => Some(read(gpu, protocol, &src)?),
    };
    drop(src);

    // SAFETY: only probes whether the library can be loaded.
    let (gemm_tflops, gemm_skipped) = if unsafe { cudarc::cublas::sys::is_culib_present() } {
        (Some(gemm_bf16(gpu, protocol)?), None)
    } else {
        (None, Some("libcublas was not found (install the CUDA toolkit or put libcublas on LD_LIBRARY_PATH)".to_string()))
    };
    let (mma_sync_tflops, l2_to_smem_tb_per_s, ceilings_skipped) =
        match HARNESS_KERNELS.not_compiled_reason() {
            Some(why) => (None, None, Some(why)),
            None => (
                Some(mma_sync(gpu, protocol)?),
                Some(l2_to_smem(gpu, protocol)?),
                None,
            ),
        };
    Ok(SpeedOfLight {
        copy_gb_per_s,
        read_gb_per_s,
        copy_bytes: COPY_BYTES,
        gemm_tflops,
        gemm_size: GEMM_SIZE,
        gemm_skipped,
        mma_sync_tflops,
        l2_to_smem_tb_per_s,
        ceilings_skipped,
    })
}

/// Reads `src` (the copy's 1 GiB source, far past any L2) with `ceiling_read`: bytes read
/// per second.
fn read(gpu: &Gpu, protocol: TimingProtocol, src: &cudarc::driver::CudaSlice<u32>) -> Result<f64> {
    let func = HARNESS_KERNELS.function(gpu, ReadKernel::Ceiling.name())?;
    let mut sink = sink(gpu, "read ceiling")?;
    let chunks = (src.len() * 4 / 16) as i64;
    let t = time(gpu, protocol, || {
        read_through(gpu, ReadKernel::Ceiling, &func, src, &mut sink)
    })?;
    Ok(gb_per_s((chunks * 16) as f64, t.median_ms))
}

/// The one int a reading kernel writes only if its data were impossible, so that the
/// compiler keeps the reads.
fn sink(gpu: &Gpu, whose: &str) -> Result<cudarc::driver::CudaSlice<i32>> {
    gpu.stream().alloc_zeros::<i32>(1).allocating(
        gpu.context(),
        4,
        format!("allocating the sink of the {whose}"),
    )
}

/// The two reading kernels of `kernels/ceilings.cu` and how each is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadKernel {
    /// `ceiling_read`, the streaming read: one block of `READ_THREADS` threads for each slab
    /// of `READ_THREADS * READ_LOADS` 16-byte chunks (`tiles.rs`).
    Ceiling,
    /// `l2_flush_read`, the decode runs' flush: a grid-stride loop, 4 blocks of 512 threads
    /// per SM.
    Flush,
}

impl ReadKernel {
    /// Its function's name in the harness's fatbin.
    pub fn name(self) -> &'static str {
        match self {
            ReadKernel::Ceiling => "ceiling_read",
            ReadKernel::Flush => "l2_flush_read",
        }
    }

    /// The launch that reads `chunks` 16-byte chunks on `gpu`.
    pub fn launch_config(self, gpu: &Gpu, chunks: usize) -> LaunchConfig {
        use crate::tiles::{READ_LOADS, READ_THREADS};
        let (grid, block) = match self {
            // At most 2^31 - 1 blocks; past that (2^40 chunks, 16 TiB) each block takes
            // every gridDim.x-th slab.
            ReadKernel::Ceiling => (
                chunks
                    .div_ceil((READ_THREADS * READ_LOADS) as usize)
                    .clamp(1, i32::MAX as usize) as u32,
                READ_THREADS,
            ),
            ReadKernel::Flush => (4 * gpu.multiprocessors, 512),
        };
        LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// Queues one read of all of `src` by `func`, the function of `kernel`: the read ceiling,
/// and each [`StreamingRead`].
pub fn read_through(
    gpu: &Gpu,
    kernel: ReadKernel,
    func: &crate::Kernel,
    src: &cudarc::driver::CudaSlice<u32>,
    sink: &mut cudarc::driver::CudaSlice<i32>,
) -> Result<()> {
    let chunks = (src.len() * 4 / 16) as i64;
    let cfg = kernel.launch_config(gpu, chunks as usize);
    let mut b = gpu.stream().launch_builder(func);
    b.arg(src).arg(&chunks).arg(sink);
    // SAFETY: (const int4*, long long, int*): `src` holds `chunks` 16-byte chunks.
    unsafe { b.launch(cfg) }.during("launching the read ceiling")?;
    Ok(())
}

/// A buffer and a read of all of it, allocated once and queued as often as needed: the
/// read floor ([`read_floor`], `ceiling_read`) and the decode runs' cold L2
/// ([`StreamingRead::l2_flush`], `l2_flush_read`).
pub struct StreamingRead {
    kernel: ReadKernel,
    read: crate::Kernel,
    buffer: cudarc::driver::CudaSlice<u32>,
    sink: cudarc::driver::CudaSlice<i32>,
}

impl StreamingRead {
    /// A zeroed buffer of `bytes` (rounded up to 16) read by `ceiling_read`, `what` naming
    /// it in errors.
    pub fn new(gpu: &Gpu, bytes: usize, what: &str) -> Result<StreamingRead> {
        StreamingRead::with_kernel(gpu, bytes, what, ReadKernel::Ceiling)
    }

    fn with_kernel(
        gpu: &Gpu,
        bytes: usize,
        what: &str,
        kernel: ReadKernel,
    ) -> Result<StreamingRead> {
        let chunks = bytes.div_ceil(16);
        Ok(StreamingRead {
            kernel,
            read: HARNESS_KERNELS.function(gpu, kernel.name())?,
            buffer: gpu.stream().alloc_zeros::<u32>(chunks * 4).allocating(
                gpu.context(),
                chunks * 16,
                format!("allocating the {what}"),
            )?,
            sink: sink(gpu, what)?,
        })
    }

    /// The bytes [`StreamingRead::l2_flush`] allocates on `gpu`: twice its L2.
    pub fn l2_flush_bytes(gpu: &Gpu) -> Result<usize> {
        let l2 = gpu
            .context()
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .during("reading the L2 size")?;
        Ok(2 * l2 as usize)
    }

    /// The cold L2 of the decode runs: queued before each timed launch, outside its event
    /// pair, a read of a buffer twice the L2's size with plain (evict-normal) loads,
    /// `l2_flush_read`. It leaves the L2 holding clean lines of that buffer, as after a
    /// model's previous layer; a flush by writing (a memset) would leave dirty lines whose
    /// write-back the next kernel's reads would pay for, and one by `ceiling_read`'s
    /// evict-first loads left the last launch's K/V in the L2 wherever they fit.
    pub fn l2_flush(gpu: &Gpu) -> Result<StreamingRead> {
        StreamingRead::with_kernel(
            gpu,
            StreamingRead::l2_flush_bytes(gpu)?,
            "L2 flush",
            ReadKernel::Flush,
        )
    }

    /// Queues one read of the whole buffer on `gpu`'s stream.
    pub fn queue(&mut self, gpu: &Gpu) -> Result<()> {
        read_through(gpu, self.kernel, &self.read, &self.buffer, &mut self.sink)
    }
}

// ANCHOR: read_floor
/// The read floor of a decode shape: `ceiling_read` over a buffer of `bytes` (a decode
/// step's K/V bytes), timed like a decode launch, with the L2 flushed before each. A
/// kernel that only reads those bytes, with a launch, a first wave of loads and a tail
/// like any other: the speed a decode kernel of that size could reach, where the large
/// read of [`measure`] (1 GiB) is the rate of a kernel too long for those costs to show.
pub fn read_floor(
    gpu: &Gpu,
    protocol: TimingProtocol,
    bytes: usize,
) -> Result<crate::timing::Timing> {
    let mut flush = StreamingRead::l2_flush(gpu)?;
    let mut read = StreamingRead::new(gpu, bytes, "read floor's buffer")?;
    time_between(gpu, protocol, || flush.queue(gpu), || read.queue(gpu))
}
// ANCHOR_END: read_floor

// ANCHOR: mma_sync_ceiling
/// 16 warps per SM (4 per scheduler), 8 independent accumulators each: enough that the
/// tensor pipe, not latency, sets the rate (measured on an H200: 1 warp per scheduler
/// reaches about 90% of this, 2 warps 98%).
fn mma_sync(gpu: &Gpu, protocol: TimingProtocol) -> Result<f64> {
    const THREADS: u32 = 512;
    const ILP: f64 = 8.0;
    const ITERS: i32 = 8192;
    let func = HARNESS_KERNELS.function(gpu, "ceiling_mma_sync")?;
    let stream = gpu.stream();
    let blocks = gpu.multiprocessors;
    let mut out = stream
        .alloc_zeros::<f32>((blocks * THREADS) as usize)
        .allocating(
            gpu.context(),
            (blocks * THREADS) as usize * 4,
            "allocating the mma.sync ceiling's output",
        )?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let t = time(gpu, protocol, || {
        let mut b = stream.launch_builder(&func);
        b.arg(&mut out).arg(&ITERS);
        // SAFETY: the kernel takes (float*, int) and writes one float per thread of `out`.
        unsafe { b.launch(cfg) }.during("launching the mma.sync ceiling")?;
        Ok(())
    })?;
    let warps = f64::from(blocks * THREADS / 32);
    Ok(tflops(
        2.0 * 16.0 * 8.0 * 16.0 * ILP * f64::from(ITERS) * warps,
        t.median_ms,
    ))
}
// ANCHOR_END: mma_sync_ceiling

/// One 256-thread block per SM streaming 32 KiB tiles through a 2-slot ring, as stage 5
/// does, from a 16 MiB buffer (less than any sm_80+ L2 of 40 MiB and more).
fn l2_to_smem(gpu: &Gpu, protocol: TimingProtocol) -> Result<f64> {
    const SRC_BYTES: usize = 16 << 20;
    const TILES: i32 = 2000;
    const SMEM: u32 = 2 * 32768;
    let func = HARNESS_KERNELS.function(gpu, "ceiling_l2_to_smem")?;
    func.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        SMEM as i32,
    )
    .during("raising the dynamic shared-memory limit")?;
    let stream = gpu.stream();
    let host: Vec<u32> = random_u16(SRC_BYTES / 4)
        .into_iter()
        .map(u32::from)
        .collect();
    let src = stream.clone_htod(&host).allocating(
        gpu.context(),
        SRC_BYTES,
        "allocating the L2 ceiling's source",
    )?;
    let mut sink = sink(gpu, "L2 ceiling")?;
    let chunks = (SRC_BYTES / 16) as i64;
    let blocks = gpu.multiprocessors;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: SMEM,
    };
    let t = time(gpu, protocol, || {
        let mut b = stream.launch_builder(&func);
        b.arg(&src).arg(&chunks).arg(&TILES).arg(&mut sink);
        // SAFETY: (const int4*, long long, int, int*): `src` holds `chunks` 16-byte chunks.
        unsafe { b.launch(cfg) }.during("launching the L2-to-shared-memory ceiling")?;
        Ok(())
    })?;
    let bytes = 32768.0 * f64::from(TILES) * f64::from(blocks);
    Ok(bytes / (t.median_ms * 1e-3) / 1e12)
}

fn gemm_bf16(gpu: &Gpu, protocol: TimingProtocol) -> Result<f64> {
    let stream = gpu.stream();
    let n = GEMM_SIZE;
    // Random data, not zeros: a product of zeros runs measurably faster (less toggling).
    let bits = random_u16(n * n);
    let host: Vec<half::bf16> = bits
        .iter()
        .map(|&b| half::bf16::from_f32((b as f32 / 65535.0) - 0.5))
        .collect();
    let bytes = n * n * 2;
    let a = stream.clone_htod(&host).allocating(
        gpu.context(),
        bytes,
        "allocating the GEMM's inputs",
    )?;
    let b = stream.clone_htod(&host).allocating(
        gpu.context(),
        bytes,
        "allocating the GEMM's inputs",
    )?;
    let mut c = stream.alloc_zeros::<half::bf16>(n * n).allocating(
        gpu.context(),
        bytes,
        "allocating the GEMM's output",
    )?;
    let blas = CudaBlas::new(stream.clone()).map_err(|e| Error::Cublas(e.to_string()))?;
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: n as i32,
        k: n as i32,
        alpha: half::bf16::ONE,
        lda: n as i32,
        ldb: n as i32,
        beta: half::bf16::ZERO,
        ldc: n as i32,
    };
    let t = time(gpu, protocol, || {
        // SAFETY: a, b and c are n x n, matching the configuration.
        unsafe { blas.gemm(cfg, &a, &b, &mut c) }.map_err(|e| Error::Cublas(e.to_string()))
    })?;
    Ok(tflops(2.0 * (n as f64).powi(3), t.median_ms))
}

fn random_u16(n: usize) -> Vec<u16> {
    // A cheap xorshift: the values only need to be non-constant, not statistically good.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 48) as u16
        })
        .collect()
}
