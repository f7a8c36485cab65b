//! Stage 20 — FP8: stage 19's kernel on E4M3 codes. A preprocessing kernel casts bf16 Q, K
//! and V to codes with one scale per (batch, head) and writes V transposed; both products run
//! on FP8 wgmma (QGMMA), P is scaled by 2^8 and packed to codes in registers, and O leaves
//! in bf16. Head dims 64, 128 and 256, bf16 in and out. Hopper only (sm_90a).
//! Book: "Stage 20: FP8".

use harness::{
    DType, Fp8Stage, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, ToleratedSpill, VLayout,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 20,
    builds_on: Some(19),
    slug: "fp8",
    idea: "FP8: Q, K and V as E4M3 codes with a scale per head, both products on FP8 wgmma, V transposed, P scaled by 2^8",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Qgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16],
    kernels: &KERNELS,
};

pub static STAGE: Fp8Stage = Fp8Stage {
    info: &INFO,
    kernel: "fp8",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[],
    v_layout: VLayout::Transposed,
    rotation: None,
    // The timeline build's consumers keep 232 registers (its producer needs 40 for its clock
    // readings) against the timed kernel's 240, and spill a few of the 208 that O, one tile's
    // P V, S and P take; the timed kernel spills nothing (`tests/kernels.rs`).
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "fp8_timeline_",
        kernel_suffix: "_d128",
        bytes: 72,
    }],
};
