//! Stage 11 — wgmma: stage 10's TMA loads, tile and softmax with both products on
//! Hopper's warpgroup MMA, S = Q K^T from shared memory (SS) and O += P V with P in
//! registers (RS). Hopper only (sm_90a). Book: "Stage 11: wgmma".

use harness::{
    DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage, ToleratedSpill,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 11,
    builds_on: Some(10),
    slug: "wgmma",
    idea: "wgmma: a warpgroup's asynchronous products, S from shared memory, P from registers",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::HgmmaWithHmmaRowSums,
    timeline: true,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Two warpgroups, stage 10's 128-row Q tile and its ring of `NSTAGES` 64-key K and V tiles.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "wgmma",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[],
    // The timeline build at d128, held to the timed kernel's two blocks an SM (128
    // registers), keeps its clock readings on the stack: 16 bytes stored, 16 loaded.
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "wgmma_timeline_",
        kernel_suffix: "_d128",
        bytes: 32,
    }],
};
