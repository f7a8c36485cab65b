//! Stage 31 — V as it comes: stage 28's kernel (three consumer warpgroups, each taking its
//! tiles in order), whose preparation no longer writes V transposed. The producer
//! warpgroup's warps 1-3, idle in stage 28, turn each V tile around in shared memory with
//! stage 30's transpose (`ldmatrix.trans`, byte permutes, `stmatrix`). Head dim 128, bf16 in
//! and out. Hopper only (sm_90a). Book: "Stage 31: V as it comes".

use harness::{
    DType, Fp8Stage, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, ToleratedSpill, VLayout,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 31,
    builds_on: Some(28),
    slug: "natural-v",
    idea: "V as it comes: the three consumers' idle producer warps transpose each V tile in shared memory, stage 30's way",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Qgmma,
    timeline: true,
    head_dims: &[128],
    dtypes: &[DType::Bf16],
    kernels: &KERNELS,
};

pub static STAGE: Fp8Stage = Fp8Stage {
    info: &INFO,
    kernel: "natural_v",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[],
    v_layout: VLayout::Natural,
    rotation: None,
    // Both builds spill in the producer warpgroup alone, as stage 30's do: at 24 registers
    // (32 in the timeline build) its transposing warps keep their tile count, ring state and
    // barrier addresses in local memory, a few words stored and read once a tile; the loop
    // over blocks keeps its addresses in registers. The consumers spill nothing (checked in
    // the SASS: every STL and LDL comes after the producer's setmaxnreg.dec).
    tolerated_spills: &[
        ToleratedSpill {
            kernel_prefix: "natural_v_timeline_",
            kernel_suffix: "_d128",
            bytes: 16,
        },
        ToleratedSpill {
            kernel_prefix: "natural_v_bf16",
            kernel_suffix: "_d128",
            bytes: 52,
        },
    ],
};
