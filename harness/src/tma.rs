//! The TMA stages' launch: [`TiledStage`](crate::TiledStage)'s grid and tiles, with the
//! tensor maps ([`crate::tensor_map`]) passed after the kernel's parameters.

use crate::kernels::kernel_name;
pub use crate::tensor_map::{AttnTensorMaps, BOX_COLS, TensorMap};
use crate::{
    AttnParams, Gpu, Kernel, LaunchArgs, PrefillStage, Problem, QTiles, Result, Stage, StageInfo,
    ToleratedSpill, Workload,
};

/// A stage whose kernels load through TMA: [`TiledStage`](crate::TiledStage)'s grid and
/// tiles, the tensor maps after the parameters, and 1 KiB more shared memory so the kernel
/// can align its tiles to the 1024 bytes a 128-byte swizzle needs.
pub struct TmaStage {
    pub info: &'static StageInfo,
    /// The exported kernel's prefix (`FLASHLAB_EXPORT_ALL_TMA(prefix, ...)`).
    pub kernel: &'static str,
    pub tiles: QTiles,
    /// Head dims whose kernels use other tiles than `tiles` (say, more consumer warpgroups
    /// where a head dim leaves registers for them), with those tiles.
    pub tiles_by_head_dim: &'static [(usize, QTiles)],
    pub tolerated_spills: &'static [ToleratedSpill],
}

impl TmaStage {
    /// The tiles the kernels for `head_dim` launch with.
    pub fn tiles_for(&self, head_dim: usize) -> QTiles {
        self.tiles_by_head_dim
            .iter()
            .find(|(d, _)| *d == head_dim)
            .map_or(self.tiles, |(_, t)| *t)
    }
}

/// The kernel `prefix` names for the run's dtype and head dim: a run that passes a timeline
/// buffer gets the stage's recording build of it (`<prefix>_timeline_...`, timeline.cuh);
/// every other run, the timed one.
pub(crate) fn timed_or_timeline_kernel(
    info: &StageInfo,
    prefix: &str,
    gpu: &Gpu,
    args: &LaunchArgs,
) -> Result<Kernel> {
    timed_or_timeline_kernel_for(info, prefix, gpu, &args.params, &args.problem)
}

/// [`timed_or_timeline_kernel`] for a launch whose parameters hold an [`AttnParams`] among
/// others: the backward's (`BwdParams::fwd`), whose main kernel alone records.
pub fn timed_or_timeline_kernel_for(
    info: &StageInfo,
    prefix: &str,
    gpu: &Gpu,
    params: &AttnParams,
    problem: &Problem,
) -> Result<Kernel> {
    let prefix = if params.timeline != 0 {
        crate::timeline::kernel_prefix(prefix)
    } else {
        prefix.to_string()
    };
    info.kernels.function(
        gpu,
        &kernel_name(&prefix, problem.dtype, problem.shape.head_dim),
    )
}

/// Slack for aligning dynamic shared memory (16-byte aligned) to 1024 bytes.
pub const SMEM_ALIGN_SLACK: u32 = 1024;

impl Stage for TmaStage {
    fn info(&self) -> &'static StageInfo {
        self.info
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Prefill(self)
    }

    fn tolerated_spill_bytes(&self, kernel: &str) -> u32 {
        crate::tiled::tolerated(self.tolerated_spills, kernel)
    }
}

impl PrefillStage for TmaStage {
    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem.shape;
        let t = self.tiles_for(p.head_dim);
        let grid = t.grid(p);
        let function = timed_or_timeline_kernel(self.info, self.kernel, gpu, args)?;
        let maps = AttnTensorMaps::new(&args.params, args.problem.dtype, t.block_q, t.block_kv)?;
        gpu.launch_with_maps(
            &function,
            grid,
            (t.threads(), 1, 1),
            t.smem_bytes(p.head_dim) + SMEM_ALIGN_SLACK,
            &args.params,
            Some(&maps),
        )
    }
}
