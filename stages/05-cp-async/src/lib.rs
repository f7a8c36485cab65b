//! Stage 5 — cp.async pipelining: stage 4 with its K and V tiles arriving by `cp.async`
//! into a ring of slots while the warps compute on an earlier tile.
//! Book: "Stage 5: cp.async pipelining".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TiledStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 5,
    builds_on: Some(4),
    slug: "cp-async",
    idea: "cp.async: K/V tiles copied straight into a ring of shared-memory slots while the warps compute on an earlier tile",
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
    kernel: "cp_async",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tolerated_spills: &[],
};
