//! Stage 16 — the overlap inside a warpgroup: stage 13's turns, with each consumer's own
//! products software-pipelined. S for tile t is issued together with P V for tile t - 1,
//! and the softmax of tile t runs while that P V is still in flight. Hopper only (sm_90a).
//! Book: "Stage 16: the overlap inside a warpgroup".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 16,
    builds_on: Some(13),
    slug: "overlap",
    idea: "the overlap inside a warpgroup: the softmax of tile t under P V of tile t - 1, S issued with that P V",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 13's warpgroups, tiles and ring.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "overlap",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[(
        64,
        QTiles {
            warps: tiles::WARPS_D64,
            block_q: tiles::BLOCK_Q_D64,
            block_kv: tiles::BLOCK_KV,
            kv_slots: tiles::NSTAGES,
        },
    )],
    tolerated_spills: &[],
};
