//! Stage 24 — V transposed in the kernel: stage 20's kernel, whose preparation writes V's
//! codes as K's (a row of D codes a key), and whose producer warpgroup transposes each V
//! tile in shared memory as it lands, with the three warps that stage 20 left idle. Head dim
//! 128, bf16 in and out. Hopper only (sm_90a). Book: "Stage 24: V transposed in the kernel".

use harness::{
    DType, Fp8Stage, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, ToleratedSpill, VLayout,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 24,
    builds_on: Some(20),
    slug: "v-transpose",
    idea: "V transposed in the kernel: the producer's idle warps turn each V tile around in shared memory, so V's codes arrive as K's",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Qgmma,
    timeline: true,
    head_dims: &[128],
    dtypes: &[DType::Bf16],
    kernels: &KERNELS,
};

pub static STAGE: Fp8Stage = Fp8Stage {
    info: &INFO,
    kernel: "v_transpose",
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
            kernel_prefix: "v_transpose_timeline_",
            kernel_suffix: "_d128",
            bytes: 72,
        },
        // The producer warpgroup keeps 24 registers, and its transposing warps need all of
        // them in their loop over units: the tile count and the ring's state go to local
        // memory, a few words stored and read once a tile. The consumers spill nothing.
        ToleratedSpill {
            kernel_prefix: "v_transpose_bf16",
            kernel_suffix: "_d128",
            bytes: 56,
        },
    ],
};
