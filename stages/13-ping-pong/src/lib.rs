//! Stage 13 — ping-pong: stage 12's roles with the consumers' tensor-core work scheduled.
//! Two named barriers pass a turn between the consumer warpgroups so one's softmax runs
//! under the other's wgmmas; inside a warpgroup, S for tile t is issued before P V for tile
//! t - 1 and the softmax runs while it is in flight. Causal blocks start with the longest
//! rows. Hopper only (sm_90a). Book: "Stage 13: ping-pong".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 13,
    slug: "ping-pong",
    idea: "ping-pong: one consumer's softmax under the other's wgmmas, S issued before the last P V",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    workload: harness::Workload::Prefill,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 12's warpgroups, tiles and ring.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "ping_pong",
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
