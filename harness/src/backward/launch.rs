//! The launch of a backward stage's three kernels, FlashAttention's split: the preprocess
//! over the query rows (D, and the zeroed accumulator and semaphores), the main kernel over
//! the key blocks of each K/V head, the postprocess over the query rows again (dQ scaled and
//! rounded). Stages 22 and 25 launch all three with [`launch_three`]; stage 23, whose main
//! kernel also takes tensor maps, takes the grids from [`ThreeKernels::grids`].

use super::BackwardArgs;
use crate::kernels::kernel_name;
use crate::{Gpu, KernelBundle, Result};

/// A backward stage's launch shape, from its `tiles.rs`.
#[derive(Clone, Copy, Debug)]
pub struct ThreeKernels {
    /// The preprocess: query rows and threads per block.
    pub pre_rows: u32,
    pub pre_threads: u32,
    /// The main kernel: keys per block, threads per block, dynamic shared memory.
    pub block_kv: u32,
    pub main_threads: u32,
    pub main_smem: u32,
    /// The postprocess: query rows and threads per block.
    pub post_rows: u32,
    pub post_threads: u32,
}

/// A grid's three dimensions.
pub type Grid = (u32, u32, u32);

impl ThreeKernels {
    /// The grids of the preprocess, `(ceil(seqlen_q / pre_rows), heads, batch)`; of the main
    /// kernel, `(ceil(seqlen_k / block_kv), kv_heads, batch)`; of the postprocess, as the
    /// preprocess's with `post_rows`.
    pub fn grids(&self, args: &BackwardArgs) -> (Grid, Grid, Grid) {
        let p = &args.problem.shape;
        let rows = |per_block: u32| {
            (
                (p.seqlen_q as u32).div_ceil(per_block),
                p.heads as u32,
                p.batch as u32,
            )
        };
        let keys = (
            (p.seqlen_k as u32).div_ceil(self.block_kv),
            p.kv_heads as u32,
            p.batch as u32,
        );
        (rows(self.pre_rows), keys, rows(self.post_rows))
    }
}

/// The three kernels `bwd_preprocess`, `bwd` and `bwd_postprocess` of `kernels` on one
/// stream, each taking the one [`super::BwdParams`].
pub fn launch_three(
    gpu: &Gpu,
    args: &BackwardArgs,
    kernels: &KernelBundle,
    shape: &ThreeKernels,
) -> Result<()> {
    let (p, dtype) = (&args.problem.shape, args.problem.dtype);
    let kernel = |prefix| kernels.function(gpu, &kernel_name(prefix, dtype, p.head_dim));
    let (pre_grid, main_grid, post_grid) = shape.grids(args);
    let params = &args.params;
    gpu.launch_with(
        &kernel("bwd_preprocess")?,
        pre_grid,
        (shape.pre_threads, 1, 1),
        0,
        params,
    )?;
    gpu.launch_with(
        &kernel("bwd")?,
        main_grid,
        (shape.main_threads, 1, 1),
        shape.main_smem,
        params,
    )?;
    gpu.launch_with(
        &kernel("bwd_postprocess")?,
        post_grid,
        (shape.post_threads, 1, 1),
        0,
        params,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Problem;
    use crate::backward::BwdParams;

    /// Stage 22's and 25's shape (and stage 23's, with its own key block).
    const SHAPE: ThreeKernels = ThreeKernels {
        pre_rows: 64,
        pre_threads: 128,
        block_kv: 128,
        main_threads: 256,
        main_smem: 0,
        post_rows: 64,
        post_threads: 128,
    };

    fn args(
        batch: usize,
        heads: usize,
        kv_heads: usize,
        seqlen_q: usize,
        seqlen_k: usize,
    ) -> BackwardArgs {
        let mut problem = Problem::new(batch, heads, seqlen_q, 128);
        problem.shape.kv_heads = kv_heads;
        problem.shape.seqlen_k = seqlen_k;
        BackwardArgs {
            problem,
            params: BwdParams::default(),
        }
    }

    #[test]
    fn grids_cover_the_query_rows_and_the_key_blocks_of_each_kv_head() {
        // GQA, seqlen_q != seqlen_k, neither a multiple of a block: the pre- and postprocess
        // over ceil(300 / 64) row blocks of every query head, the main kernel over
        // ceil(77 / 128) key blocks of every K/V head.
        let (pre, main, post) = SHAPE.grids(&args(2, 8, 2, 300, 77));
        assert_eq!(pre, (5, 8, 2));
        assert_eq!(main, (1, 2, 2));
        assert_eq!(post, (5, 8, 2));
        let (pre, main, post) = SHAPE.grids(&args(1, 16, 16, 8192, 8192));
        assert_eq!((pre, main, post), ((128, 16, 1), (64, 16, 1), (128, 16, 1)));
        // One row, one key: one block each.
        let (pre, main, post) = SHAPE.grids(&args(1, 1, 1, 1, 1));
        assert_eq!((pre, main, post), ((1, 1, 1), (1, 1, 1), (1, 1, 1)));
    }
}
