//! Stage 2 — fused attention with online softmax on CUDA cores: one kernel, a Q tile in
//! shared memory, K and V tiles streamed through it, four threads per query row sharing
//! the running max and sum. Book: "Stage 2: online softmax".

use harness::kernels::kernel_name;
use harness::{
    DType, Gpu, GpuArch, KernelBundle, LaunchArgs, PrefillStage, Result, Stage, StageInfo,
    TensorCores, Workload,
};

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 2,
    builds_on: Some(1),
    slug: "online-softmax",
    idea: "one fused kernel: K/V tiles stream through shared memory, online softmax in registers",
    gpu: GpuArch::Sm80,
    tensor_cores: TensorCores::None,
    timeline: false,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

pub mod tiles;
use tiles::{BC, BR, THREADS};

pub struct OnlineSoftmax;
pub static STAGE: OnlineSoftmax = OnlineSoftmax;

impl Stage for OnlineSoftmax {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Prefill(self)
    }
}

impl PrefillStage for OnlineSoftmax {
    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem;
        let d = p.shape.head_dim as u32;
        // q_smem and kv_smem in the input dtype (2 bytes), s_smem in fp32.
        let smem = (BR * d + BC * d) * 2 + BR * BC * 4;
        let grid = (
            (p.shape.seqlen_q as u32).div_ceil(BR),
            p.shape.heads as u32,
            p.shape.batch as u32,
        );
        let function = KERNELS.function(
            gpu,
            &kernel_name("online_softmax", p.dtype, p.shape.head_dim),
        )?;
        gpu.launch(&function, grid, (THREADS, 1, 1), smem, &args.params)
    }
}
