//! Stage 23 — the backward on Hopper: stage 22's backward (P recomputed from the LSE, dK
//! and dV in registers for a block's keys, dQ summed in an fp32 accumulator, the
//! deterministic order) as FlashAttention-3's `hopper/` backward: a producer warpgroup whose
//! warp 0 loads K and V once and Q, dO, LSE and D per query block by TMA into a two-slot
//! ring, and whose warp 1 adds each dQ tile from shared memory with one bulk reduce-add; two
//! MMA warpgroups running the five products on wgmma; causal blocks longest first. Hopper
//! only (sm_90a). Book: "Stage 23: the backward on Hopper".

use harness::backward::{BackwardArgs, ThreeKernels};
use harness::kernels::kernel_name;
use harness::tensor_map::BackwardTensorMaps;
use harness::tma::{SMEM_ALIGN_SLACK, timed_or_timeline_kernel_for};
use harness::{
    BackwardStage, DType, Gpu, GpuArch, KernelBundle, PrefillStage, Result, Stage, StageInfo,
    TensorCores, ToleratedSpill, Workload,
};

pub mod tiles;

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 23,
    // A backward stage names the forward it builds on: stage 19's Hopper forward writes its O
    // and LSE, and lends it its machinery (TMA, wgmma, the roles). The math is stage 22's.
    builds_on: Some(19),
    slug: "hopper-backward",
    idea: "the backward on Hopper: TMA, wgmma, a producer warpgroup, dQ added from shared memory by one bulk reduce a tile",
    gpu: GpuArch::Sm90a,
    tensor_cores: TensorCores::Hgmma,
    // The main kernel's timeline build (`bwd_timeline_bf16_d<D>`): its load warp, its dQ
    // writer warp and its two MMA warpgroups, `flashlab timeline 23`.
    timeline: true,
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// The main kernel's timeline builds, which keep clock readings in registers the timed
/// kernel has no use for (hopper_backward.cu: registers). At d64 its MMA warpgroups take
/// 224 (their products fit; the producer warps get 56) and spill one 64-bit clock reading,
/// the start of P^T's recomputation, stored once a step before it and loaded once after it
/// to record it: 8 bytes stored and 8 loaded. At d128 its MMA warpgroups need all of their
/// 240 (at 232 ptxas serializes their wgmmas), so its producer warps keep the timed
/// kernel's 24 and the load warp spills its recorder's fields and clock readings: 60 bytes
/// stored and 62 loaded, a few local accesses a step in a warp that mostly waits. The
/// timeline's measured overhead includes them.
const TOLERATED_SPILLS: &[ToleratedSpill] = &[
    ToleratedSpill {
        kernel_prefix: "bwd_timeline_",
        kernel_suffix: "_d64",
        bytes: 16,
    },
    ToleratedSpill {
        kernel_prefix: "bwd_timeline_",
        kernel_suffix: "_d128",
        bytes: 122,
    },
];

pub struct HopperBackward;

pub static STAGE: HopperBackward = HopperBackward;

impl Stage for HopperBackward {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Backward(self)
    }

    fn tolerated_spill_bytes(&self, kernel: &str) -> u32 {
        harness::tiled::tolerated(TOLERATED_SPILLS, kernel)
    }
}

impl BackwardStage for HopperBackward {
    /// A Hopper forward writes the O and LSE the backward reads: stage 19's.
    fn forward(&self) -> &'static dyn PrefillStage {
        &stage19_lazy_rescale::STAGE
    }

    // ANCHOR: launch
    /// Three kernels on one stream: the preprocess over the query rows, the main kernel with
    /// one block per 128 keys of a K/V head (and the tensor maps of Q, K, V and dO, in boxes
    /// of the head dim's BLOCK_M query rows, after its parameters), the postprocess over the
    /// query rows again. A run that passes a timeline buffer (`params.fwd.timeline`) gets the
    /// main kernel's recording build.
    fn launch_backward(&self, gpu: &Gpu, args: &BackwardArgs) -> Result<()> {
        let (p, dtype) = (&args.problem.shape, args.problem.dtype);
        let kernel = |prefix| KERNELS.function(gpu, &kernel_name(prefix, dtype, p.head_dim));
        let shape = ThreeKernels {
            pre_rows: tiles::PRE_ROWS,
            pre_threads: tiles::PRE_THREADS,
            block_kv: tiles::BLOCK_N,
            main_threads: tiles::WARPS * 32,
            main_smem: tiles::main_smem_bytes(p.head_dim) + SMEM_ALIGN_SLACK,
            post_rows: tiles::POST_ROWS,
            post_threads: tiles::POST_THREADS,
        };
        let (pre_grid, keys, post_grid) = shape.grids(args);
        let params = &args.params;
        let maps =
            BackwardTensorMaps::new(params, dtype, tiles::block_m(p.head_dim), tiles::BLOCK_N)?;
        let main = timed_or_timeline_kernel_for(&INFO, "bwd", gpu, &params.fwd, &args.problem)?;
        let (pre, post) = (kernel("bwd_preprocess")?, kernel("bwd_postprocess")?);
        gpu.launch_with(&pre, pre_grid, (shape.pre_threads, 1, 1), 0, params)?;
        let main_block = (shape.main_threads, 1, 1);
        gpu.launch_with_extra(&main, keys, main_block, shape.main_smem, params, &maps)?;
        gpu.launch_with(&post, post_grid, (shape.post_threads, 1, 1), 0, params)
    }
    // ANCHOR_END: launch
}
