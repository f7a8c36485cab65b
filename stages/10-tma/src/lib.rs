//! Stage 10 — TMA and mbarriers: stage 9's compute with every copy issued by one thread to
//! Hopper's tensor memory accelerator, completing on mbarriers; O leaves by a TMA store.
//! Hopper only (sm_90a). Book: "Stage 10: TMA and mbarriers".

use harness::{
    DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage, ToleratedSpill,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 10,
    builds_on: Some(9),
    slug: "tma",
    idea: "TMA and mbarriers: one thread issues every copy, the copy engine swizzles and signals",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 9's tiles (a Q tile and a ring of `NSTAGES` K and V tiles), in TMA's layout.
/// At d128 every register is taken (255) and ptxas keeps one value in local memory, the
/// loop's bound: 4 bytes stored once, reloaded once per 64-key tile (stage 9 kept 24).
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "tma",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[],
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "tma_",
        kernel_suffix: "_d128",
        bytes: 12,
    }],
};
