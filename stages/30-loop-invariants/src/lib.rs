//! Stage 30 — what the loop does not change, computed before it: stage 29's kernel with
//! every wgmma descriptor built as a 32-bit low word over one constant high word, each ring
//! slot's descriptors the first slot's plus a constant, and the first tile that needs the
//! mask found once, so that a consumer's way from its turn to its wgmmas holds only adds.
//! Hopper only (sm_90a). Book: "Stage 30: what the loop does not change".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 30,
    builds_on: Some(29),
    slug: "loop-invariants",
    idea: "what the loop does not change, computed before it: descriptors as low words over a constant, each slot's from the first, the first masked tile",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 29's warpgroups, ring and tiles.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "inv",
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
