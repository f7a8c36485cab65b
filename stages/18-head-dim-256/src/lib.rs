//! Stage 18 — head dim 256: stage 16's kernel with a tile for D = 256. O is 128 fp32
//! registers a consumer thread there, so the key tile narrows to 80 (S on an m64n80k16
//! wgmma) and O += P V is one m64n256k16 per k-step. Hopper only (sm_90a).
//! Book: "Stage 18: head dim 256".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 18,
    builds_on: Some(16),
    slug: "head-dim-256",
    idea: "head dim 256: a 128 x 80 tile, S on an N = 80 wgmma and O on N = 256, in 224 KiB of shared memory",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 16's warpgroups and ring; at d256 an 80-key tile.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "hd256",
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
