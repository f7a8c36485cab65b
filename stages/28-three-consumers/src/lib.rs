//! Stage 28 — three consumers: stage 27 with three consumer warpgroups at head dims 64 and
//! 128 instead of two, each taking its tiles in order (S, its softmax, P V, the fold) rather
//! than overlapping one tile's P V with the next one's softmax. The overlap needs S, O, one
//! tile's P V and P live at once, which three consumers' 160 registers cannot hold; in
//! order, a consumer needs O with S or with P V, and the third consumer's latency hides
//! what the overlap hid. At head dim 256 it is stage 27 (stage 20). Bf16 in and out. Hopper
//! only (sm_90a). Book: "Stage 28: three consumers".

use harness::{
    DType, Fp8Stage, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, ToleratedSpill, VLayout,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 28,
    builds_on: Some(27),
    slug: "three-consumers",
    idea: "three consumers: at head dims 64 and 128 three consumer warpgroups, each taking its tiles in order, hide the latencies that the overlap inside one warpgroup hid",
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
    kernel: "three_consumers",
    tiles: TILES,
    tiles_by_head_dim: &[
        (
            64,
            QTiles {
                block_kv: tiles::BLOCK_KV_D64,
                ..TILES
            },
        ),
        (
            256,
            QTiles {
                warps: tiles::WARPS_D256,
                block_q: tiles::BLOCK_Q_D256,
                ..TILES
            },
        ),
    ],
    v_layout: VLayout::Transposed,
    rotation: None,
    // The timeline builds (d64 and d128 alone) spill 28 bytes each: their consumers keep the
    // clock readings in 160 registers. The timed kernels spill nothing (`tests/kernels.rs`).
    tolerated_spills: &[ToleratedSpill {
        kernel_prefix: "three_consumers_timeline_",
        kernel_suffix: "",
        bytes: 28,
    }],
};
