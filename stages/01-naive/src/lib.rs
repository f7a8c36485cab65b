//! Stage 1 — naive attention: S = QKᵀ·scale into global memory in fp32, a row softmax,
//! then O = PV; three kernels, one thread per output element. Book: "Stage 1: naive".

use harness::kernels::kernel_name;
use harness::{
    DType, Gpu, GpuArch, KernelBundle, LaunchArgs, PrefillStage, Problem, Result, Stage, StageInfo,
    TensorCores, Workload,
};

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 1,
    builds_on: None,
    slug: "naive",
    idea: "three kernels; the full score matrix S is written to global memory",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::None,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

pub mod tiles;
use tiles::{SOFTMAX_THREADS, TILE};

pub struct Naive;
pub static STAGE: Naive = Naive;

impl Stage for Naive {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Prefill(self)
    }
}

impl PrefillStage for Naive {
    /// The fp32 score matrix, one row per query of every head.
    fn scratch_elements(&self, p: &Problem) -> usize {
        p.shape.batch * p.shape.heads * p.shape.seqlen_q * p.shape.seqlen_k
    }

    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem;
        let function =
            |prefix| KERNELS.function(gpu, &kernel_name(prefix, p.dtype, p.shape.head_dim));
        let bh = (p.shape.batch * p.shape.heads) as u32;
        let (sq, sk, d) = (
            p.shape.seqlen_q as u32,
            p.shape.seqlen_k as u32,
            p.shape.head_dim as u32,
        );
        let block = (TILE, TILE, 1);
        gpu.launch(
            &function("naive_scores")?,
            (sk.div_ceil(TILE), sq.div_ceil(TILE), bh),
            block,
            0,
            &args.params,
        )?;
        gpu.launch(
            &function("naive_softmax")?,
            (sq.div_ceil(SOFTMAX_THREADS), bh, 1),
            (SOFTMAX_THREADS, 1, 1),
            0,
            &args.params,
        )?;
        gpu.launch(
            &function("naive_output")?,
            (d.div_ceil(TILE), sq.div_ceil(TILE), bh),
            block,
            0,
            &args.params,
        )
    }
}
