//! Stage 3 — tensor cores: both products on `mma.sync.m16n8k16` fed by `ldmatrix`, Q's
//! fragments held in registers, P handed from the S accumulator to the PV product in
//! registers. Shared memory is still row-major. Book: "Stage 3: tensor cores".

use harness::kernels::kernel_name;
use harness::{DType, Gpu, KernelBundle, LaunchArgs, Result, Stage, StageInfo};

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 3,
    slug: "tensor-cores",
    idea: "mma.sync + ldmatrix; Q and P stay in registers; shared memory still row-major",
    min_compute_capability: (8, 0),
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Must match `WARPS`, `BLOCK_Q` and `BLOCK_KV` in `kernels/tensor_cores.cu`.
const WARPS: u32 = 4;
const BLOCK_Q: u32 = 64;
const BLOCK_KV: u32 = 64;

pub struct TensorCores;
pub static STAGE: TensorCores = TensorCores;

impl Stage for TensorCores {
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
        let function =
            KERNELS.function(gpu, &kernel_name("tensor_cores", p.dtype, p.shape.head_dim))?;
        gpu.launch(&function, grid, (WARPS * 32, 1, 1), smem, &args.params)
    }
}
