//! Stage 30 — the transpose on ldmatrix and stmatrix: stage 24's kernel, whose three
//! transposing warps turn each V tile around with `ldmatrix.trans`, byte permutes and
//! `stmatrix`, about 10 instructions for each 16 codes a lane where stage 24 spent 28. Head
//! dim 128, bf16 in and out. Hopper only (sm_90a). Book: "Stage 30: the transpose on
//! ldmatrix and stmatrix".

use harness::{
    DType, Fp8Stage, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, ToleratedSpill, VLayout,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 30,
    builds_on: Some(24),
    slug: "matrix-transpose",
    idea: "the transpose on ldmatrix and stmatrix: 16 codes a lane in one ldmatrix.trans, four byte permutes and one stmatrix",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Qgmma,
    timeline: true,
    head_dims: &[128],
    dtypes: &[DType::Bf16],
    kernels: &KERNELS,
};

pub static STAGE: Fp8Stage = Fp8Stage {
    info: &INFO,
    kernel: "matrix_transpose",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[],
    v_layout: VLayout::Natural,
    rotation: None,
    tolerated_spills: &[
        // As stage 20's timeline build: its consumers keep 232 registers (its producer needs
        // 40 for its clock readings) and spill a few of the 208 that O, one tile's P V, S and
        // P take.
        ToleratedSpill {
            kernel_prefix: "matrix_transpose_timeline_",
            kernel_suffix: "_d128",
            bytes: 72,
        },
        // The producer warpgroup keeps 24 registers, as in stage 24: its transposing warps'
        // tile count, ring state and barrier addresses go to local memory, a few words stored
        // and read once a tile; the loop over blocks keeps its addresses in registers. The
        // consumers spill nothing.
        ToleratedSpill {
            kernel_prefix: "matrix_transpose_bf16",
            kernel_suffix: "_d128",
            bytes: 72,
        },
    ],
};
