//! Stage 8 — masked tiles apart: the tile's code compiled with and without the mask, so
//! the unmasked tiles run one block of straight-line code.
//! Book: "Stage 8: masked tiles apart".

use harness::{
    DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TiledStage, ToleratedSpill,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 8,
    builds_on: Some(7),
    slug: "mask-split",
    idea: "masked tiles apart: the common, unmasked tile is one block of straight-line code",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// A Q tile and a ring of `NSTAGES` K and V tiles in shared memory.
/// At d128 ptxas still keeps a few loop invariants in local memory (28 bytes stored, 40
/// reloaded at `sm_90a`; half that at `sm_80`), reloaded at the top of each tile, off the
/// products' path (book: "Stage 8: masked tiles apart").
pub static STAGE: TiledStage = TiledStage {
    info: &INFO,
    kernel: "mask_split",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "mask_split_",
        kernel_suffix: "_d128",
        bytes: 68,
    }],
};
