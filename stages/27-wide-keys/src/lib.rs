//! Stage 27 — wide keys: stage 20's FP8 kernel with 192 keys a tile at head dim 64, where S
//! leaves the registers for them, so each tile's fixed costs (the consumers' turn, the waits
//! for S and P V, the fold of P V into O) are paid for 1.5 times the work; V^T's tile is three
//! boxes of 64 keys under the 64-byte swizzle. At head dims 128 and 256 it is stage 20.
//! Bf16 in and out. Hopper only (sm_90a). Book: "Stage 27: wide keys".

use harness::{
    DType, Fp8Stage, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, ToleratedSpill, VLayout,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 27,
    builds_on: Some(20),
    slug: "wide-keys",
    idea: "wide keys: 192 keys a tile at head dim 64, where S leaves the registers, so each tile's fixed costs buy 1.5 times the work",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Qgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16],
    kernels: &KERNELS,
};

const TILES: QTiles = QTiles {
    warps: tiles::WARPS,
    block_q: tiles::BLOCK_Q,
    block_kv: tiles::BLOCK_KV,
    kv_slots: tiles::NSTAGES,
};

pub static STAGE: Fp8Stage = Fp8Stage {
    info: &INFO,
    kernel: "wide_keys",
    tiles: TILES,
    tiles_by_head_dim: &[(
        64,
        QTiles {
            block_kv: tiles::BLOCK_KV_D64,
            ..TILES
        },
    )],
    v_layout: VLayout::Transposed,
    rotation: None,
    // As stage 20's: the timeline build's consumers keep 232 registers and spill a few at
    // d128; the timed kernels spill nothing (`tests/kernels.rs`).
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "wide_keys_timeline_",
        kernel_suffix: "_d128",
        bytes: 72,
    }],
};
