//! Stage 15 — flash decode with the combine fused: stage 14's split kernel, whose last
//! split of each row tile to finish merges all the splits' partial results, so a decode
//! step is one launch. Book: "Stage 15: the combine fused".

use harness::decode::{DecodeLaunch, DecodeTiles, SplitRule};
use harness::{
    DType, DecodeStage, Gpu, GpuArch, KernelBundle, Result, Stage, StageInfo, TensorCores, Workload,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 15,
    builds_on: Some(14),
    slug: "fused-combine",
    idea: "the combine fused: the last split of each row tile to finish merges the splits, one launch a step",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

pub struct FusedCombine;

pub static STAGE: FusedCombine = FusedCombine;

pub const TILES: DecodeTiles = DecodeTiles {
    rows: tiles::ROWS,
    block_kv: tiles::BLOCK_KV,
    warps: tiles::WARPS,
    wide_col_split: tiles::WIDE_COL_SPLIT,
    kv_slots: tiles::NSTAGES,
};

impl Stage for FusedCombine {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Decode(self)
    }
}

impl DecodeStage for FusedCombine {
    fn tiles(&self) -> DecodeTiles {
        TILES
    }

    /// The merge is fused and cheap: as many splits as one wave of blocks holds, the wave
    /// counted in K/V tile bytes per SM.
    fn split_rule(&self) -> SplitRule {
        SplitRule::OneWave
    }

    // ANCHOR: launch
    /// One block per (split, row tile, sequence x K/V head), and nothing after it: the
    /// last split of each row tile merges (`params.split_counters` counts them).
    fn launch_decode(&self, gpu: &Gpu, args: &DecodeLaunch) -> Result<()> {
        let p = args.problem;
        let t = TILES;
        let split = self.split_kernel(gpu, p)?;
        let grid = (
            args.splits as u32,
            t.row_tiles(p) as u32,
            (p.batch * p.kv_heads) as u32,
        );
        gpu.launch_with(
            &split,
            grid,
            (t.threads(p.head_dim), 1, 1),
            t.smem_bytes(p.head_dim),
            &args.params,
        )
    }
    // ANCHOR_END: launch
}
