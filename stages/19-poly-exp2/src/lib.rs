//! Stage 19 — part of the exponentials on the FMA units: stage 18's kernel, with some of
//! the softmax's 2^x computed by a cubic polynomial on the FMA pipe instead of MUFU.EX2 on
//! the special-function units, which are the softmax's bottleneck. Hopper only (sm_90a).
//! Book: "Stage 19: exponentials on two units".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 19,
    builds_on: Some(18),
    slug: "poly-exp2",
    idea: "part of the exponentials on the FMA units: 2^x as a cubic polynomial beside MUFU.EX2",
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
    kernel: "pexp2",
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
