//! Stage 12 — warp specialization: stage 11's wgmmas and softmax, with a producer
//! warpgroup that issues every TMA copy and two consumer warpgroups that compute, meeting
//! only at full and empty mbarriers; setmaxnreg moves registers from the producer to the
//! consumers. Hopper only (sm_90a). Book: "Stage 12: warp specialization".

use harness::{DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaStage};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 12,
    builds_on: Some(17),
    slug: "warp-specialized",
    idea: "warp specialization: a producer warpgroup loads, two or three consumers compute, full and empty barriers between",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// A producer and two consumer warpgroups with a 128-row Q tile (three and 192 rows at
/// head dim 64), and a ring of `NSTAGES` 128-key K and V tiles.
pub static STAGE: TmaStage = TmaStage {
    info: &INFO,
    kernel: "warp_specialized",
    tiles: QTiles {
        warps: tiles::WARPS,
        block_q: tiles::BLOCK_Q,
        block_kv: tiles::BLOCK_KV,
        kv_slots: tiles::NSTAGES,
    },
    tiles_by_head_dim: &[(
        64,
        QTiles {
            warps: tiles::WARPS_D64,
            block_q: tiles::BLOCK_Q_D64,
            block_kv: tiles::BLOCK_KV,
            kv_slots: tiles::NSTAGES,
        },
    )],
    tolerated_spills: &[],
};
