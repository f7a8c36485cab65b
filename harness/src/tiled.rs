//! The launch every tensor-core stage shares: one block per `block_q` query rows of one
//! (head, batch), a Q tile and `kv_slots` K and V tiles in shared memory. Stages 3 to 8
//! differ in their kernels, not in this, so each one's `src/lib.rs` is a table row: its
//! [`StageInfo`], its [`QTiles`] (from its `src/tiles.rs`, which its kernel is checked
//! against at compile time) and the spills it tolerates, with the reason.

use crate::kernels::kernel_name;
use crate::{Gpu, LaunchArgs, PrefillStage, Result, Stage, StageInfo, Workload};

/// A tensor-core stage's tile shape: what the grid, the block and shared memory follow from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QTiles {
    pub warps: u32,
    /// Query rows per block: 16 per m16 row tile, one or two such tiles per warp.
    pub block_q: u32,
    /// Keys per K/V tile.
    pub block_kv: u32,
    /// K and V tiles resident at once: 1 before stage 5, the ring's depth from stage 5 on.
    pub kv_slots: u32,
}

impl QTiles {
    pub const fn threads(&self) -> u32 {
        self.warps * 32
    }

    /// One block per `block_q` query rows of one (head, batch).
    pub fn grid(&self, shape: &reference::Shape) -> (u32, u32, u32) {
        (
            (shape.seqlen_q as u32).div_ceil(self.block_q),
            shape.heads as u32,
            shape.batch as u32,
        )
    }

    /// The Q tile and `kv_slots` tiles each of K and V, 16-bit elements.
    pub const fn smem_bytes(&self, head_dim: usize) -> u32 {
        (self.block_q + 2 * self.kv_slots * self.block_kv) * head_dim as u32 * 2
    }
}

/// A spill a stage accepts in one of its kernels, and why (`tests/kernels.rs` holds every
/// other kernel to zero).
#[derive(Clone, Copy, Debug)]
pub struct ToleratedSpill {
    /// The kernel's name starts with this (`fa2_shape_` and a head dim suffix, say).
    pub kernel_prefix: &'static str,
    /// Only kernels with this suffix (`_d128`).
    pub kernel_suffix: &'static str,
    /// Bytes of spill stores plus loads, at most.
    pub bytes: u32,
}

/// The spill bytes `kernel` may have under `spills` (0 when none names it).
pub fn tolerated(spills: &[ToleratedSpill], kernel: &str) -> u32 {
    spills
        .iter()
        .find(|s| kernel.starts_with(s.kernel_prefix) && kernel.ends_with(s.kernel_suffix))
        .map_or(0, |s| s.bytes)
}

/// A stage whose kernels take the one launch above: `<kernel>_<dtype>_d<head_dim>`.
pub struct TiledStage {
    pub info: &'static StageInfo,
    /// The exported kernel's prefix (`FLASHLAB_EXPORT_ALL(prefix, ...)` in its `.cu`).
    pub kernel: &'static str,
    pub tiles: QTiles,
    pub tolerated_spills: &'static [ToleratedSpill],
}

impl Stage for TiledStage {
    fn info(&self) -> &'static StageInfo {
        self.info
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Prefill(self)
    }

    fn tolerated_spill_bytes(&self, kernel: &str) -> u32 {
        tolerated(self.tolerated_spills, kernel)
    }
}

impl PrefillStage for TiledStage {
    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem.shape;
        let t = self.tiles;
        let grid = t.grid(p);
        let function = self.info.kernels.function(
            gpu,
            &kernel_name(self.kernel, args.problem.dtype, p.head_dim),
        )?;
        gpu.launch(
            &function,
            grid,
            (t.threads(), 1, 1),
            t.smem_bytes(p.head_dim),
            &args.params,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FlashAttention-2's shape at d128 (128 query rows, a 2-slot ring of 64-key tiles)
    /// needs 96 KiB, so two blocks fit an H100's 228 KiB SM; stage 4's needs 48 KiB.
    #[test]
    fn shared_memory_of_known_shapes() {
        let fa2 = QTiles {
            warps: 4,
            block_q: 128,
            block_kv: 64,
            kv_slots: 2,
        };
        assert_eq!(fa2.smem_bytes(128), 96 * 1024);
        assert_eq!(fa2.smem_bytes(64), 48 * 1024);
        assert_eq!(fa2.threads(), 128);
        let stage4 = QTiles {
            block_q: 64,
            kv_slots: 1,
            ..fa2
        };
        assert_eq!(stage4.smem_bytes(128), 48 * 1024);
    }
}
