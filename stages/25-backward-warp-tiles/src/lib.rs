//! Stage 25 — stage 22's backward with FlashAttention-2's warp tiles: S and dP in 32 x 32
//! tiles of 2 x 4 warps, P and dS stored to shared memory, dV and dK in 32-key tiles of 4 x 2
//! warps, dQ in 32-query tiles of 2 x 4, so every product loads fewer fragments per mma.
//! Book: "Stage 25: the backward's warp tiles".

use harness::backward::{BackwardArgs, ThreeKernels, launch_three};
use harness::{
    BackwardStage, DType, Gpu, GpuArch, KernelBundle, PrefillStage, Result, Stage, StageInfo,
    TensorCores, Workload,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 25,
    builds_on: Some(22),
    slug: "backward-warp-tiles",
    idea: "the backward's warp tiles: P and dS through shared memory, so each product loads fewer fragments per mma",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::Hmma,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

pub struct Backward;

pub static STAGE: Backward = Backward;

impl Stage for Backward {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Backward(self)
    }
}

impl BackwardStage for Backward {
    /// Stage 9's forward writes the O and LSE the backward reads.
    fn forward(&self) -> &'static dyn PrefillStage {
        &stage09_lean_softmax::STAGE
    }

    // ANCHOR: launch
    /// Three kernels on one stream: the preprocess over the query rows, the main kernel with
    /// one block per 128 keys of a K/V head, the postprocess over the query rows again.
    fn launch_backward(&self, gpu: &Gpu, args: &BackwardArgs) -> Result<()> {
        let shape = ThreeKernels {
            pre_rows: tiles::PRE_ROWS,
            pre_threads: tiles::PRE_THREADS,
            block_kv: tiles::BLOCK_KV,
            main_threads: tiles::WARPS * 32,
            main_smem: tiles::main_smem_bytes(args.problem.shape.head_dim),
            post_rows: tiles::POST_ROWS,
            post_threads: tiles::POST_THREADS,
        };
        launch_three(gpu, args, &KERNELS, &shape)
    }
    // ANCHOR_END: launch
}
