//! Stage 29 — the ring in the order it is used: stage 26's kernel with each K/V tile
//! loaded as soon as its ring slot is free and waited for only where a wgmma reads it: the
//! producer loads K of tile t + 1 before V of tile t (K's slot frees a product earlier), and
//! a consumer waits for V's tile after issuing S, while S runs. Hopper only (sm_90a). Book:
//! "Stage 29: the ring in the order it is used".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 29,
    builds_on: Some(26),
    slug: "ring-order",
    idea: "the ring in the order it is used: K of the next tile loaded before V of this one, V waited for while S runs",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 26's warpgroups, ring and tiles.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "ring",
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
