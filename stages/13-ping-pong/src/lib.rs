//! Stage 13 — ping-pong: stage 12's roles with the consumers taking turns at the tensor
//! cores. Two named barriers pass a turn between the consumer warpgroups, so one's softmax
//! runs under the other's wgmmas. Hopper only (sm_90a). Book: "Stage 13: ping-pong".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 13,
    builds_on: Some(12),
    slug: "ping-pong",
    idea: "ping-pong: the consumers take turns at the tensor cores, one's softmax under the other's wgmmas",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
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
