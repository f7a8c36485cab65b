//! Stage 14 — flash decode: a few new query rows per sequence against a long K/V cache,
//! split across blocks (split-KV) and merged by a combine kernel, with the query heads of
//! a GQA group packed into one tile and the cache contiguous or paged.
//! Book: "Stage 14: flash decode".

use harness::decode::{DecodeLaunch, DecodeTiles};
use harness::kernels::kernel_name;
use harness::{
    DType, DecodeStage, Gpu, GpuArch, KernelBundle, Result, Stage, StageInfo, TensorCores, Workload,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 14,
    builds_on: Some(9),
    slug: "flash-decode",
    idea: "flash decode: split the cache across blocks and combine, GQA heads packed into one tile, a paged cache",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128, 256],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

pub struct FlashDecode;

pub static STAGE: FlashDecode = FlashDecode;

pub const TILES: DecodeTiles = DecodeTiles {
    rows: tiles::ROWS,
    block_kv: tiles::BLOCK_KV,
    warps: tiles::WARPS,
    wide_col_split: tiles::WIDE_COL_SPLIT,
    kv_slots: tiles::NSTAGES,
};

impl Stage for FlashDecode {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Decode(self)
    }
}

impl DecodeStage for FlashDecode {
    fn tiles(&self) -> DecodeTiles {
        TILES
    }

    // ANCHOR: launch
    /// One block per (split, row tile, sequence x K/V head); then, when there is more than
    /// one split, the combine kernel with one warp per 32 columns of an output row.
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
        )?;
        if args.splits > 1 {
            let combine = KERNELS.function(
                gpu,
                &kernel_name("flash_decode_combine", p.dtype, p.head_dim),
            )?;
            // One warp per 32 columns of an output row.
            let warps = (p.batch * p.seqlen_q * p.heads * p.head_dim / 32) as u32;
            gpu.launch_with(
                &combine,
                (warps.div_ceil(t.warps), 1, 1),
                (t.warps * 32, 1, 1),
                0,
                &args.params,
            )?;
        }
        Ok(())
    }
    // ANCHOR_END: launch
}
