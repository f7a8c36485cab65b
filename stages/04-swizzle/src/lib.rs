//! Stage 4 — swizzled shared memory: stage 3 with XOR-swizzled tiles, so ldmatrix reads
//! and the global-to-shared stores have no bank conflicts. Book: "Stage 4: swizzled
//! shared memory".

use harness::kernels::kernel_name;
use harness::{DType, Gpu, KernelBundle, LaunchArgs, Result, Stage, StageInfo};

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 4,
    slug: "swizzle",
    idea: "XOR-swizzled shared memory: no bank conflicts on ldmatrix or on the tile stores",
    min_compute_capability: (8, 0),
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Must match `WARPS`, `BLOCK_Q` and `BLOCK_KV` in `kernels/swizzle.cu`.
const WARPS: u32 = 4;
const BLOCK_Q: u32 = 64;
const BLOCK_KV: u32 = 64;

pub struct Swizzle;
pub static STAGE: Swizzle = Swizzle;

impl Stage for Swizzle {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem;
        // Q, K and V tiles, 2-byte elements.
        let smem = (BLOCK_Q + 2 * BLOCK_KV) * p.shape.head_dim as u32 * 2;
        let grid = (
            (p.shape.seqlen_q as u32).div_ceil(BLOCK_Q),
            p.shape.heads as u32,
            p.shape.batch as u32,
        );
        let function = KERNELS.function(gpu, &kernel_name("swizzle", p.dtype, p.shape.head_dim))?;
        gpu.launch(&function, grid, (WARPS * 32, 1, 1), smem, &args.params)
    }
}
