//! Stage 7 — FlashAttention-2's work shape: two m16 row tiles per warp (a 128-row block),
//! so each K and V fragment feeds two `mma`s; Q is re-read from shared memory.
//! Book: "Stage 7: FlashAttention-2's work shape".

use harness::{
    DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TiledStage, ToleratedSpill,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 7,
    builds_on: Some(6),
    slug: "fa2-shape",
    idea: "FlashAttention-2's work shape: two m16 row tiles per warp, so each K/V fragment feeds two mma",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// A Q tile and a ring of `NSTAGES` K and V tiles in shared memory.
/// At d128 two m16 tiles' O and S take ~190 of a thread's 255 registers, and ptxas keeps
/// a few loop invariants (copy cursors, ldmatrix bases) in local memory: 64 bytes stored,
/// 68 reloaded at `sm_90a`, outside the products. Measured faster than one m16 tile per
/// warp anyway (book: "Stage 7: FlashAttention-2's work shape"); stage 8 shrinks it.
pub static STAGE: TiledStage = TiledStage {
    info: &INFO,
    kernel: "fa2_shape",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "fa2_shape_",
        kernel_suffix: "_d128",
        bytes: 132,
    }],
};
