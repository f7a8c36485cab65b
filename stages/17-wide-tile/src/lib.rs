//! Stage 17 — the wide tile: stage 11's wgmma with the key tile one wgmma wide (128 keys)
//! and the softmax and epilogue as the parts every later Hopper stage shares. Hopper only
//! (sm_90a). Book: "Stage 17: the wide tile".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 17,
    builds_on: Some(11),
    slug: "wide-tile",
    idea: "the wide tile: 128 keys, one wgmma wide, with the softmax and epilogue as shared parts",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Two warpgroups, a 128-row Q tile and a ring of `NSTAGES` 128-key K and V tiles.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "wide_tile",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[],
    tolerated_spills: &[],
};
