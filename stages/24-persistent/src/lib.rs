//! Stage 24 — a persistent kernel: stage 19's kernel in a grid of one block an SM, each
//! block walking a list of work tiles, so the producer loads the next tile's Q, K and V
//! while the consumers finish and store this one. Hopper only (sm_90a).
//! Book: "Stage 24: a persistent kernel".

use harness::{
    DType, GpuArch, KernelBundle, QTiles, StageInfo, TensorCores, TmaGrid, TmaStage, ToleratedSpill,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 24,
    builds_on: Some(19),
    slug: "persistent",
    idea: "a persistent grid: one block an SM walks its work tiles, loading the next tile under this one's end",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    timeline: true,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// Stage 19's warpgroups, ring and tiles, in a persistent grid of one block an SM.
pub static STAGE: TmaStage = persistent(None);

/// The same kernels in a grid of 3 blocks, for `tests/walk.rs`: on the tests' small problems
/// every block then walks several work tiles, both ways under a causal mask, and hands Q's
/// and O's tiles from one work tile to the next.
pub static WALK: TmaStage = persistent(Some(3));

const fn persistent(max_blocks: Option<u32>) -> TmaStage {
    TmaStage {
        info: &INFO,
        kernel: "persistent",
        tiles: QTiles {
            warps: tiles::WARPS,
            block_q: tiles::BLOCK_Q,
            block_kv: tiles::BLOCK_KV,
            kv_slots: tiles::NSTAGES,
        },
        tiles_by_head_dim: &[
            (
                64,
                QTiles {
                    warps: tiles::WARPS_D64,
                    block_q: tiles::BLOCK_Q_D64,
                    block_kv: tiles::BLOCK_KV,
                    kv_slots: tiles::NSTAGES,
                },
            ),
            (
                256,
                QTiles {
                    warps: tiles::WARPS,
                    block_q: tiles::BLOCK_Q,
                    block_kv: tiles::BLOCK_KV_D256,
                    kv_slots: tiles::NSTAGES,
                },
            ),
        ],
        tolerated_spills: TIMELINE_SPILLS,
        grid: TmaGrid::Persistent {
            own_o_tile_up_to: tiles::O_OWN_TILE_UP_TO as usize,
            max_blocks,
        },
    }
}

/// The timeline builds only: their producer keeps its clock readings and the walk's state in
/// the 40 registers (32 at d64) the consumers leave it, and spills a few bytes; the timed
/// kernels spill none (`tests/kernels.rs`), and the timeline's measured overhead includes these.
const TIMELINE_SPILLS: &[ToleratedSpill] = &[
    ToleratedSpill {
        kernel_prefix: "persistent_timeline_",
        kernel_suffix: "_d64",
        bytes: 104,
    },
    ToleratedSpill {
        kernel_prefix: "persistent_timeline_",
        kernel_suffix: "_d128",
        bytes: 16,
    },
    ToleratedSpill {
        kernel_prefix: "persistent_timeline_",
        kernel_suffix: "_d256",
        bytes: 16,
    },
];
