//! Stage 6 — fewer instructions per mma: stage 5 with `ldmatrix.x4`, addresses stepped
//! instead of recomputed, fixed-trip copies and the softmax scale folded into `exp2`.
//! Book: "Stage 6: fewer instructions per mma".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TiledStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 6,
    builds_on: Some(5),
    slug: "fewer-instructions",
    idea: "fewer instructions per mma: ldmatrix.x4, addresses stepped not recomputed, fixed-trip copies, the scale folded into exp2",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// A Q tile and a ring of `NSTAGES` K and V tiles in shared memory.
pub static STAGE: TiledStage = TiledStage {
    info: &INFO,
    kernel: "fewer_instructions",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tolerated_spills: &[],
};
