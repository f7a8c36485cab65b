//! Stage 3 — tensor cores: both products on `mma.sync.m16n8k16` fed by `ldmatrix`, Q's
//! fragments held in registers, P handed from the S accumulator to the PV product in
//! registers. Shared memory is still row-major. Book: "Stage 3: tensor cores".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TiledStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 3,
    builds_on: Some(2),
    slug: "tensor-cores",
    idea: "mma.sync + ldmatrix; Q and P stay in registers; shared memory still row-major",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// One Q, K and V tile in shared memory.
pub static STAGE: TiledStage = TiledStage {
    info: &INFO,
    kernel: "tensor_cores",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: 1,
    },
    tolerated_spills: &[],
};
