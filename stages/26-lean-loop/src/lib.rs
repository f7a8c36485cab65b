//! Stage 26 — the lean loop: stage 19's kernel with fewer cycles on each consumer
//! warpgroup's own path around its loop, which at head dims 64 and 128 the tensor cores
//! wait on: the wgmmas' descriptors built once a tile and stepped by constants in uniform
//! registers, and the wait for P V a quarter of the way through the exponentials, with P
//! packed among the rest. Hopper only (sm_90a). Book: "Stage 26: the lean loop".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 26,
    builds_on: Some(19),
    slug: "lean-loop",
    idea: "the lean loop: fewer static cycles on each warpgroup's own path (descriptors stepped in uniform registers, P packed among the exponentials)",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 19's warpgroups, ring and tiles.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "lean",
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
