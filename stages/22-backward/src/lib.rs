//! Stage 22 — the backward pass on mma.sync: dQ, dK and dV from dO and the forward's saved
//! LSE, FlashAttention-2's three kernels (D = rowsum(dO ∘ O); one block per K/V block
//! looping over the query blocks, P recomputed, dK and dV in registers, dQ added into an
//! fp32 buffer with atomics; dQ scaled and rounded), and a deterministic order for dQ's
//! additions. Book: "Stage 22: the backward pass".

use harness::backward::{BackwardArgs, ThreeKernels, launch_three};
use harness::{
    BackwardStage, DType, Gpu, GpuArch, KernelBundle, PrefillStage, Result, Stage, StageInfo,
    TensorCores, Workload,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 22,
    builds_on: Some(9),
    slug: "backward",
    idea: "the backward pass: P recomputed from the LSE, dK and dV in registers, dQ by atomics or in a fixed order",
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
