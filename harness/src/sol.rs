//! The practical speed of light on this GPU, measured rather than read off a datasheet:
//! a large device-to-device copy (bytes read + written per second) and a large cuBLAS
//! bf16 matrix product (TFLOP/s). The roofline in the book and "% of SOL" in the bench
//! divide by these.

use crate::error::CudaContext as _;
use crate::timing::{tflops, time};
use crate::{Error, Gpu, Result};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys::cublasOperation_t};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct SpeedOfLight {
    /// Device-to-device copy, counting bytes read plus bytes written.
    pub copy_gb_per_s: f64,
    pub copy_bytes: usize,
    /// cuBLAS bf16 GEMM (fp32 accumulation) on random data.
    pub gemm_tflops: Option<f64>,
    pub gemm_size: usize,
    /// Why the GEMM was not measured, when it was not.
    pub gemm_skipped: Option<String>,
}

pub const COPY_BYTES: usize = 1 << 30;
pub const GEMM_SIZE: usize = 8192;

pub fn measure(gpu: &Gpu) -> Result<SpeedOfLight> {
    let stream = gpu.stream();
    let n = COPY_BYTES / 4;
    let host: Vec<u32> = random_u16(n).into_iter().map(u32::from).collect();
    let src = stream.clone_htod(&host).during("allocating copy source")?;
    let mut dst = stream
        .alloc_zeros::<u32>(n)
        .during("allocating copy destination")?;
    // ANCHOR: copy
    let copy = time(gpu, || {
        stream
            .memcpy_dtod(&src, &mut dst)
            .during("device-to-device copy")
    })?;
    let copy_gb_per_s = 2.0 * COPY_BYTES as f64 / (copy.median_ms * 1e-3) / 1e9;
    // ANCHOR_END: copy
    drop((src, dst));

    // SAFETY: only probes whether the library can be loaded.
    let (gemm_tflops, gemm_skipped) = if unsafe { cudarc::cublas::sys::is_culib_present() } {
        (Some(gemm_bf16(gpu)?), None)
    } else {
        (None, Some("libcublas was not found (install the CUDA toolkit or put libcublas on LD_LIBRARY_PATH)".to_string()))
    };
    Ok(SpeedOfLight {
        copy_gb_per_s,
        copy_bytes: COPY_BYTES,
        gemm_tflops,
        gemm_size: GEMM_SIZE,
        gemm_skipped,
    })
}

fn gemm_bf16(gpu: &Gpu) -> Result<f64> {
    let stream = gpu.stream();
    let n = GEMM_SIZE;
    // Random data, not zeros: a product of zeros runs measurably faster (less toggling).
    let bits = random_u16(n * n);
    let host: Vec<half::bf16> = bits
        .iter()
        .map(|&b| half::bf16::from_f32((b as f32 / 65535.0) - 0.5))
        .collect();
    let a = stream.clone_htod(&host).during("allocating GEMM inputs")?;
    let b = stream.clone_htod(&host).during("allocating GEMM inputs")?;
    let mut c = stream
        .alloc_zeros::<half::bf16>(n * n)
        .during("allocating GEMM output")?;
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
    let t = time(gpu, || {
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
