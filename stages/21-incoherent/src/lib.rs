//! Stage 21 — incoherent processing: stage 20, whose preprocessing multiplies Q's and K's
//! rows by the same random orthogonal matrix (random signs, then a Hadamard transform) before
//! the cast to E4M3, so that outliers are spread across the head dim. The attention kernel
//! is stage 20's. Head dims 64, 128 and 256, bf16 in and out. Hopper only (sm_90a).
//! Book: "Stage 21: incoherent processing".

use harness::{
    DType, Fp8Stage, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, ToleratedSpill, VLayout,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 21,
    builds_on: Some(20),
    slug: "incoherent",
    idea: "incoherent processing: Q and K rotated by one random orthogonal matrix (signs and a Hadamard transform) before the FP8 cast",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Qgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16],
    kernels: &KERNELS,
};

pub static STAGE: Fp8Stage = Fp8Stage {
    info: &INFO,
    kernel: "incoherent",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[],
    v_layout: VLayout::Transposed,
    rotation: Some(tiles::ROTATION_SEED),
    // Stage 20's: the timeline build's consumers keep 232 registers (its producer needs 40 for its clock
    // readings) against the timed kernel's 240, and spill a few of the 208 that O, one tile's
    // P V, S and P take; the timed kernel spills nothing (`tests/kernels.rs`).
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "incoherent_timeline_",
        kernel_suffix: "_d128",
        bytes: 72,
    }],
};
