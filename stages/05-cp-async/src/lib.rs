//! Stage 5 — pipelining: K and V tiles arrive by `cp.async` into a ring of slots while
//! the warps compute on an earlier tile; `ldmatrix.x4` for K and V. Every (warps, ring
//! depth) variant in [`VARIANTS`] is compiled; `FLASHLAB_STAGE5=warps,stages` picks one
//! at run time, so the tuning is an experiment a reader can repeat without rebuilding.
//! Book: "Stage 5: cp.async pipelining".

use harness::kernels::kernel_name;
use harness::{DType, Error, Gpu, KernelBundle, LaunchArgs, Result, Stage, StageInfo};

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 5,
    slug: "cp-async",
    idea: "cp.async ring of K/V tiles overlapping loads with compute; ldmatrix.x4; 128-row Q tiles",
    min_compute_capability: (8, 0),
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// The (warps, ring stages) variants `CP_ASYNC_VARIANT` exports in `kernels/cp_async.cu`.
pub const VARIANTS: &[(u32, u32)] = &[(4, 2), (4, 3), (8, 2), (8, 3)];
/// `Config::BLOCK_KV` in `kernels/cp_async.cu`; BLOCK_Q is 16 rows per warp.
pub const BLOCK_KV: u32 = 64;

/// The variant used when `FLASHLAB_STAGE5` is not set.
pub fn default_variant(_head_dim: usize) -> (u32, u32) {
    (8, 2)
}

/// The variant to launch: `FLASHLAB_STAGE5=warps,stages` if set and compiled, else the default.
pub fn variant(head_dim: usize) -> Result<(u32, u32)> {
    let Ok(text) = std::env::var("FLASHLAB_STAGE5") else {
        return Ok(default_variant(head_dim));
    };
    let parsed = text
        .split_once(',')
        .and_then(|(w, s)| Some((w.trim().parse().ok()?, s.trim().parse().ok()?)));
    match parsed {
        Some(v) if VARIANTS.contains(&v) => Ok(v),
        _ => Err(Error::InvalidProblem(format!(
            "FLASHLAB_STAGE5={text} is not a compiled variant; use warps,stages from {VARIANTS:?}"
        ))),
    }
}

pub struct CpAsync;
pub static STAGE: CpAsync = CpAsync;

impl Stage for CpAsync {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem;
        let (warps, nstages) = variant(p.head_dim)?;
        let block_q = 16 * warps;
        // The Q tile plus NSTAGES slots of K and V, 2-byte elements.
        let smem = (block_q + 2 * nstages * BLOCK_KV) * p.head_dim as u32 * 2;
        let grid = (
            (p.seqlen_q as u32).div_ceil(block_q),
            p.heads as u32,
            p.batch as u32,
        );
        let prefix = format!("cp_async_w{warps}s{nstages}");
        let function = KERNELS.function(gpu, &kernel_name(&prefix, p.dtype, p.head_dim))?;
        gpu.launch(&function, grid, (warps * 32, 1, 1), smem, &args.params)
    }
}
