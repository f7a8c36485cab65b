//! What a stage is: a row of the stage table plus how to launch its kernels.

use crate::backward::params::BackwardArgs;
use crate::decode::{DecodeLaunch, DecodeProblem, DecodeTiles, SplitRule};
use crate::kernels::{Kernel, KernelBundle, kernel_name};
use crate::{AttnParams, DType, Error, Gpu, Problem, Result};

/// One row of the stage table. `flashlab list`, the just recipes, the bench and the book
/// checks all read these, so a stage is described exactly once. Its workload is not a
/// field: the stage says it with its launch ([`Stage::workload`]), so the two cannot differ.
pub struct StageInfo {
    /// Its place in the ladder: `just stage 2`.
    pub number: u32,
    /// The stage whose kernel this one changes by one idea (`None` for the first): the
    /// ladder is a tree, and a stage's lesson is its diff from this parent, which the book's
    /// "what changed" and `tests/book.rs` compare it with. A new branch (decode on stage 9's
    /// pieces, the Hopper stages after stage 9) names the stage it grows from.
    pub builds_on: Option<u32>,
    /// Short name, also the kernel prefix and the book chapter's file stem.
    pub slug: &'static str,
    /// The one idea this stage adds over the stage it builds on.
    pub idea: &'static str,
    /// The GPUs its kernels are built for.
    pub gpu: GpuArch,
    /// The instructions its products run on, as its kernels' SASS must show them
    /// (`tests/kernels.rs` checks it against `flashlab resources`' counts).
    pub tensor_cores: TensorCores,
    /// Whether its kernels come with timeline variants, which record when each warpgroup's
    /// phases start and end (`flashlab timeline N`;
    /// `kernel-headers/include/flashlab/timeline.cuh`).
    pub timeline: bool,
    pub head_dims: &'static [usize],
    pub dtypes: &'static [DType],
    pub kernels: &'static KernelBundle,
}

impl StageInfo {
    /// `2 (online-softmax)`, for messages.
    pub fn label(&self) -> String {
        format!("{} ({})", self.number, self.slug)
    }

    /// Refuses a head dim or dtype the stage has no kernel for, naming those it has: the
    /// check prefill and decode problems share.
    pub fn check_kernel_variant(&self, head_dim: usize, dtype: DType) -> Result<()> {
        if !self.head_dims.contains(&head_dim) {
            return Err(Error::Unsupported {
                stage: self.label(),
                what: format!("head dim {head_dim}"),
                supported: format!("head dims {:?}", self.head_dims),
            });
        }
        if !self.dtypes.contains(&dtype) {
            let names: Vec<_> = self.dtypes.iter().map(|d| d.name()).collect();
            return Err(Error::Unsupported {
                stage: self.label(),
                what: format!("dtype {dtype}"),
                supported: names.join(", "),
            });
        }
        Ok(())
    }
}

/// What a stage computes, holding the launch of that workload: the one place a stage says
/// which it is ([`Stage::workload`]), so its kind, its launch and what the CLI runs it on
/// cannot disagree. A new workload is a new variant, and every `match` on it fails to
/// compile until it is handled.
#[derive(Clone, Copy)]
pub enum Workload<'a> {
    /// A sequence of queries against its keys: compute-bound, measured in TFLOPS.
    Prefill(&'a dyn PrefillStage),
    /// A few new query rows per sequence against a long K/V cache: memory-bound, measured
    /// in GB/s of K/V read ([`crate::decode`]).
    Decode(&'a dyn DecodeStage),
    /// dQ, dK and dV from dO and a forward's saved outputs: compute-bound, measured in
    /// TFLOPS of the backward's five products ([`crate::backward`]).
    Backward(&'a dyn BackwardStage),
}

impl<'a> Workload<'a> {
    pub fn kind(self) -> WorkloadKind {
        match self {
            Workload::Prefill(_) => WorkloadKind::Prefill,
            Workload::Decode(_) => WorkloadKind::Decode,
            Workload::Backward(_) => WorkloadKind::Backward,
        }
    }

    pub fn name(self) -> &'static str {
        self.kind().name()
    }

    fn info(self) -> &'static StageInfo {
        match self {
            Workload::Prefill(s) => s.info(),
            Workload::Decode(s) => s.info(),
            Workload::Backward(s) => s.info(),
        }
    }

    /// The error that refuses a `wanted` problem on this stage, naming what it does take.
    fn refuse(self, wanted: WorkloadKind) -> Error {
        let supported = match self.kind() {
            WorkloadKind::Prefill => {
                "prefill problems; the decode and backward stages are marked in `flashlab list`"
            }
            WorkloadKind::Decode => {
                "decode problems: 1 to 16 new query rows per sequence against a K/V cache (`flashlab stage N --seqlen-q 1 --cache-lens 8192`, `flashlab bench --decode`)"
            }
            WorkloadKind::Backward => {
                "backward problems: dQ, dK and dV of a prefill-shaped problem (`flashlab stage N --seqlen 4096`, `flashlab bench --backward`)"
            }
        };
        Error::Unsupported {
            stage: self.info().label(),
            what: format!("{} problems", wanted.name()),
            supported: supported.into(),
        }
    }

    /// The prefill launch, or the error that refuses a prefill problem on this stage, for
    /// the callers that take any stage (`flashlab compare`, the bench's plan).
    pub fn prefill(self) -> Result<&'a dyn PrefillStage> {
        match self {
            Workload::Prefill(s) => Ok(s),
            _ => Err(self.refuse(WorkloadKind::Prefill)),
        }
    }

    /// The decode launch, or the error that refuses a decode problem on this stage.
    pub fn decode(self) -> Result<&'a dyn DecodeStage> {
        match self {
            Workload::Decode(s) => Ok(s),
            _ => Err(self.refuse(WorkloadKind::Decode)),
        }
    }

    /// The backward launch, or the error that refuses a backward problem on this stage.
    pub fn backward(self) -> Result<&'a dyn BackwardStage> {
        match self {
            Workload::Backward(s) => Ok(s),
            _ => Err(self.refuse(WorkloadKind::Backward)),
        }
    }
}

/// A [`Workload`] without its launch, for comparing and naming (the ladder's branches,
/// `flashlab list`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    Prefill,
    Decode,
    Backward,
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Prefill => "prefill",
            WorkloadKind::Decode => "decode",
            WorkloadKind::Backward => "backward",
        }
    }
}

/// Which GPUs a stage's kernels run on, from the architectures its fatbin holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuArch {
    /// SASS for sm_80 and sm_90a plus compute_80 PTX that newer GPUs compile at load:
    /// any GPU of compute capability 8.0 or newer.
    Sm80,
    /// SASS for sm_90a only (kernel-build's `compile_hopper_stage_kernels_with`): TMA,
    /// wgmma and setmaxnreg exist on Hopper alone, and sm_90a code runs on compute
    /// capability 9.0 and no other, not even a newer GPU.
    Sm90a,
}

impl GpuArch {
    pub fn runs_on(self, compute_capability: (u32, u32)) -> bool {
        match self {
            GpuArch::Sm80 => compute_capability >= (8, 0),
            GpuArch::Sm90a => compute_capability == (9, 0),
        }
    }

    /// For `flashlab list`'s column.
    pub fn short_name(self) -> &'static str {
        match self {
            GpuArch::Sm80 => "sm_80+",
            GpuArch::Sm90a => "sm_90a",
        }
    }

    /// What a GPU needs to run the stage, for messages and skipped tests.
    pub fn needs(self) -> &'static str {
        match self {
            GpuArch::Sm80 => {
                "a GPU of compute capability 8.0 or newer (Ampere, Ada, Hopper, Blackwell)"
            }
            GpuArch::Sm90a => {
                "a Hopper GPU (compute capability 9.0: H100, H200, GH200): its kernels use Hopper's own \
                 instructions (TMA, wgmma) and are built for sm_90a, which no other GPU runs"
            }
        }
    }
}

/// The instructions a stage's two products (S = Q K^T, O += P V) are written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorCores {
    /// CUDA cores only (FFMA): no tensor-core instruction in the SASS.
    None,
    /// mma.sync: HMMA on every architecture, no wgmma.
    Hmma,
    /// wgmma on 16-bit inputs: HGMMA and no HMMA (sm_90a only).
    Hgmma,
    /// Both products on wgmma (HGMMA), with stage 9's row sums still on mma.sync (HMMA):
    /// stage 11, which moves the products and nothing else.
    HgmmaWithHmmaRowSums,
    /// wgmma on 8-bit (E4M3) inputs: QGMMA and no HGMMA or HMMA (sm_90a only).
    Qgmma,
}

/// The device buffers of one run, as the kernels see them.
pub struct LaunchArgs {
    pub problem: Problem,
    pub params: AttnParams,
    /// The FP8 stages' scales ([`crate::run::RunOptions::fp8_scales`]); the others ignore it.
    pub fp8_scales: reference::fp8_attention::Granularity,
}

/// A rung of the ladder. Implementations hold no state: the kernels are in `info().kernels`.
pub trait Stage: Sync {
    fn info(&self) -> &'static StageInfo;

    /// What the stage computes, with its launch: `Workload::Prefill(self)` for a
    /// [`PrefillStage`], `Workload::Decode(self)` for a [`DecodeStage`].
    fn workload(&self) -> Workload<'_>;

    /// Register-spill bytes (stores + loads, from the ptxas report) that `kernel` may have.
    /// Zero for every kernel unless a stage explains, where it overrides this, why a spill
    /// measured faster than the spill-free alternatives. `tests/kernels.rs` enforces it.
    fn tolerated_spill_bytes(&self, _kernel: &str) -> u32 {
        0
    }
}

/// A prefill rung: how to launch its kernels on a [`Problem`] ([`crate::run`]).
pub trait PrefillStage: Stage {
    /// fp32 elements of device workspace the stage needs (stage 1 materializes S).
    fn scratch_elements(&self, _problem: &Problem) -> usize {
        0
    }

    /// Queues what must run once before the stage's kernels on the same inputs, and is not
    /// part of the attention: the FP8 stages' quantization of bf16 Q, K and V into codes and
    /// scales in the workspace. Timed apart from [`PrefillStage::launch`] (`RunReport::prepare`).
    fn prepare(&self, _gpu: &Gpu, _args: &LaunchArgs) -> Result<()> {
        Ok(())
    }
    /// Whether [`PrefillStage::prepare`] queues anything (so there is a time to report).
    fn has_prepare(&self) -> bool {
        false
    }

    /// Queues the stage's kernel(s) on `gpu`'s stream. The harness checks for errors.
    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()>;

    /// The low-precision math the stage's kernels do, whose error against f64 sets the
    /// check's bound: the problem's dtype for the 16-bit stages, an FP8 recipe for the FP8
    /// stages, with their scales at `fp8_scales`.
    fn emulation(
        &self,
        _fp8_scales: reference::fp8_attention::Granularity,
    ) -> crate::check::Emulation {
        crate::check::Emulation::Dtype
    }
}

/// A backward rung of the ladder ([`crate::backward`]).
pub trait BackwardStage: Stage {
    /// The forward stage whose O and LSE the backward reads: its parent in the ladder, run
    /// before every backward on the same inputs (and not timed).
    fn forward(&self) -> &'static dyn PrefillStage;

    /// Queues the backward's kernels on `gpu`'s stream: D = rowsum(dO ∘ O) and the zeroed
    /// dQ accumulator, the main kernel, dQ's conversion. The harness checks for errors.
    fn launch_backward(&self, gpu: &Gpu, args: &BackwardArgs) -> Result<()>;
}

/// A decode rung of the ladder: its tile shape and how to queue its kernels (the split
/// kernel, `flash_decode_split_<dtype>_d<D>`, then whatever merges the splits).
pub trait DecodeStage: Stage {
    fn tiles(&self) -> DecodeTiles;
    /// The split kernel for `p`'s dtype and head dim, from the stage's kernels.
    fn split_kernel(&self, gpu: &Gpu, p: &DecodeProblem) -> Result<Kernel> {
        self.info()
            .kernels
            .function(gpu, &kernel_name("flash_decode_split", p.dtype, p.head_dim))
    }
    /// How many of its split kernel's blocks one SM holds at once ([`Gpu::resident_blocks`]):
    /// the most block slots per SM the split heuristic counts ([`SplitRule::slots`]).
    fn blocks_per_sm(&self, gpu: &Gpu, p: &DecodeProblem) -> Result<u32> {
        let t = self.tiles();
        gpu.resident_blocks(
            &self.split_kernel(gpu, p)?,
            t.threads(p.head_dim),
            t.smem_bytes(p.head_dim),
        )
    }
    /// The split heuristic's rule for this stage.
    fn split_rule(&self) -> SplitRule {
        SplitRule::FlashAttention
    }
    fn launch_decode(&self, gpu: &Gpu, args: &DecodeLaunch) -> Result<()>;
}

impl Gpu {
    /// Refuses a stage this GPU cannot run, naming what it needs.
    pub fn check_stage(&self, info: &StageInfo) -> Result<()> {
        if !info.gpu.runs_on(self.compute_capability) {
            return Err(Error::WrongGpu {
                stage: info.label(),
                gpu: self.name.clone(),
                needs: info.gpu.needs(),
                have_major: self.compute_capability.0,
                have_minor: self.compute_capability.1,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod gpu_arch_tests {
    use super::GpuArch;

    /// sm_90a code runs on 9.0 alone: not on Ampere or Ada, and not on Blackwell either,
    /// which a "9.0 or newer" test would wrongly let through.
    #[test]
    fn each_build_runs_where_its_machine_code_does() {
        for (cc, sm80, sm90a) in [
            ((7, 5), false, false),
            ((8, 0), true, false),
            ((8, 6), true, false),
            ((8, 9), true, false),
            ((9, 0), true, true),
            ((10, 0), true, false),
            ((12, 0), true, false),
        ] {
            assert_eq!(GpuArch::Sm80.runs_on(cc), sm80, "sm_80+ on {cc:?}");
            assert_eq!(GpuArch::Sm90a.runs_on(cc), sm90a, "sm_90a on {cc:?}");
        }
    }

    #[test]
    fn the_hopper_requirement_names_hopper_and_the_build() {
        let needs = GpuArch::Sm90a.needs();
        assert!(needs.contains("Hopper") && needs.contains("9.0") && needs.contains("sm_90a"));
    }
}

/// A prefill stage and a decode stage with no kernels, for the tests of what a stage's
/// workload decides without a GPU: the dispatch, the refusals, the validation of a run.
#[cfg(test)]
pub(crate) mod fakes {
    use super::*;
    use crate::decode::{DecodeLaunch, DecodeTiles};

    static KERNELS: KernelBundle = KernelBundle {
        crate_name: "none",
        fatbin: &[],
        ptxas_report: "",
        status: "",
        sass_counts: "",
        loaded: std::sync::Mutex::new(Vec::new()),
    };

    const fn info(number: u32, slug: &'static str, head_dims: &'static [usize]) -> StageInfo {
        StageInfo {
            number,
            builds_on: None,
            slug,
            idea: "",
            gpu: GpuArch::Sm80,
            tensor_cores: TensorCores::Hmma,
            timeline: false,
            head_dims,
            dtypes: &[DType::Bf16],
            kernels: &KERNELS,
        }
    }

    pub(crate) static PREFILL_INFO: StageInfo = info(3, "fake-prefill", &[64, 128]);
    static DECODE_INFO: StageInfo = info(14, "fake-decode", &[128]);

    pub struct FakePrefill;
    pub struct FakeDecode;
    pub static PREFILL: FakePrefill = FakePrefill;
    pub static DECODE: FakeDecode = FakeDecode;

    pub const TILES: DecodeTiles = DecodeTiles {
        rows: 16,
        block_kv: 64,
        warps: 4,
        wide_col_split: 2,
        kv_slots: 3,
    };

    impl Stage for FakePrefill {
        fn info(&self) -> &'static StageInfo {
            &PREFILL_INFO
        }
        fn workload(&self) -> Workload<'_> {
            Workload::Prefill(self)
        }
    }

    impl PrefillStage for FakePrefill {
        fn launch(&self, _: &Gpu, _: &LaunchArgs) -> Result<()> {
            unreachable!("the fakes are never launched")
        }
    }

    impl Stage for FakeDecode {
        fn info(&self) -> &'static StageInfo {
            &DECODE_INFO
        }
        fn workload(&self) -> Workload<'_> {
            Workload::Decode(self)
        }
    }

    impl DecodeStage for FakeDecode {
        fn tiles(&self) -> DecodeTiles {
            TILES
        }
        fn launch_decode(&self, _: &Gpu, _: &DecodeLaunch) -> Result<()> {
            unreachable!("the fakes are never launched")
        }
    }
}

#[cfg(test)]
mod workload_tests {
    use super::fakes::{DECODE, PREFILL, TILES};
    use super::*;

    /// A stage's workload holds its launch: the kind and the launch come from one value.
    #[test]
    fn each_stage_gives_its_own_launch() {
        let stages: [&dyn Stage; 2] = [&PREFILL, &DECODE];
        let kinds: Vec<_> = stages.iter().map(|s| s.workload().kind()).collect();
        assert_eq!(kinds, [WorkloadKind::Prefill, WorkloadKind::Decode]);
        assert_eq!(stages.map(|s| s.workload().name()), ["prefill", "decode"]);
        let prefill = PREFILL.workload().prefill().unwrap();
        assert_eq!(prefill.info().slug, "fake-prefill");
        let decode = DECODE.workload().decode().unwrap();
        assert_eq!((decode.info().number, decode.tiles()), (14, TILES));
    }

    /// Asking a stage for the other workload's launch is a user's mistake (`flashlab
    /// compare 3 14`), answered with what the stage does run.
    #[test]
    fn the_other_workload_is_refused_by_name() {
        let err = DECODE.workload().prefill().err().unwrap().to_string();
        assert_eq!(
            err,
            "stage 14 (fake-decode) does not support prefill problems; it supports decode problems: 1 to 16 new query rows per sequence against a K/V cache (`flashlab stage N --seqlen-q 1 --cache-lens 8192`, `flashlab bench --decode`)"
        );
        let err = PREFILL.workload().decode().err().unwrap().to_string();
        assert_eq!(
            err,
            "stage 3 (fake-prefill) does not support decode problems; it supports prefill problems; the decode and backward stages are marked in `flashlab list`"
        );
        let err = DECODE.workload().backward().err().unwrap().to_string();
        assert!(err.contains("does not support backward problems; it supports decode problems"));
    }
}
