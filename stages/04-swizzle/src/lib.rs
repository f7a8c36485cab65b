//! Stage 4 — swizzled shared memory: stage 3 with XOR-swizzled tiles, so ldmatrix reads
//! and the global-to-shared stores have no bank conflicts. Book: "Stage 4: swizzled
//! shared memory".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TiledStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 4,
    builds_on: Some(3),
    slug: "swizzle",
    idea: "XOR-swizzled shared memory: no bank conflicts on ldmatrix or on the tile stores",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 3's launch: one Q, K and V tile in shared memory.
pub static STAGE: TiledStage = TiledStage {
    info: &INFO,
    kernel: "swizzle",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: 1,
    },
    tolerated_spills: &[],
};
