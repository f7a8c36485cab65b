//! Stage 9 — a lean softmax: one barrier per tile, row sums on the tensor cores, the lazy
//! rescale and P one k-step at a time beside its P V products (the last two at d128).
//! Book: "Stage 9: a lean softmax".

use harness::{
    DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TiledStage, ToleratedSpill,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 9,
    builds_on: Some(8),
    slug: "lean-softmax",
    idea: "a lean softmax: one barrier per tile, row sums on the tensor cores, lazy rescale, P a k-step at a time",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// A Q tile and a ring of `NSTAGES` K and V tiles in shared memory.
/// At d128 ptxas keeps 2-3 loop invariants in local memory (8 bytes stored, 16 reloaded
/// at `sm_90a`; 12 and 32 at `sm_80`), reloaded at the top of each tile; the builds that
/// avoid it measured slower (book: "Stage 9: a lean softmax").
pub static STAGE: TiledStage = TiledStage {
    info: &INFO,
    kernel: "lean_softmax",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "lean_softmax_",
        kernel_suffix: "_d128",
        bytes: 48,
    }],
};
