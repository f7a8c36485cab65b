//! Stage 19 — the lazy rescale at every head dim: stage 18's kernel, whose online softmax
//! skips O's rescale unless a row's max rose by more than 8 (log2 units) at D = 64 too, not
//! only at D = 128 and 256. Hopper only (sm_90a).
//! Book: "Stage 19: the lazy rescale everywhere".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 19,
    builds_on: Some(18),
    slug: "lazy-rescale",
    idea: "the lazy rescale at every head dim: O rescaled only when a row max rises by more than 8, at d64 too",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 18's warpgroups, ring and tiles.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "lazy",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[
        (
            64,
            QTiles {
                warps: tiles::WARPS_D64,
                block_q: tiles::BLOCK_Q_D64,
                block_kv: tiles::BLOCK_KV,
                kv_slots: tiles::NSTAGES,
            },
        ),
        (
            256,
            QTiles {
                warps: tiles::WARPS,
                block_q: tiles::BLOCK_Q,
                block_kv: tiles::BLOCK_KV_D256,
                kv_slots: tiles::NSTAGES,
            },
        ),
    ],
    tolerated_spills: &[],
};
