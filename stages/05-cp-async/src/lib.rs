//! Stage 5 — pipelining: K and V tiles arrive by `cp.async` into a ring of slots while
//! the warps compute on an earlier tile; `ldmatrix.x4` for K and V; 128-row Q tiles.
//! Book: "Stage 5: cp.async pipelining".

use harness::kernels::kernel_name;
use harness::{DType, Gpu, KernelBundle, LaunchArgs, Result, Stage, StageInfo};

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

/// `Config<D>` of `kernels/cp_async.cu`, for the launch: (warps, BLOCK_Q, BLOCK_KV, NSTAGES).
pub fn config(head_dim: usize) -> (u32, u32, u32, u32) {
    match head_dim {
        64 | 128 => (8, 128, 64, 2),
        _ => unreachable!("StageInfo::validate admits only head dims 64 and 128"),
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
        let (warps, block_q, block_kv, nstages) = config(p.head_dim);
        // The Q tile plus NSTAGES slots of K and V, 2-byte elements.
        let smem = (block_q + 2 * nstages * block_kv) * p.head_dim as u32 * 2;
        let grid = (
            (p.seqlen_q as u32).div_ceil(block_q),
            p.heads as u32,
            p.batch as u32,
        );
        let function = KERNELS.function(gpu, &kernel_name("cp_async", p.dtype, p.head_dim))?;
        gpu.launch(&function, grid, (warps * 32, 1, 1), smem, &args.params)
    }
}
