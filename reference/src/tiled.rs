//! The FlashAttention-2 forward algorithm on the CPU, structured exactly like the kernels' loop
//! so a reader can step through what one thread block does.
//!
//! ```text
//! for each (batch, head, Q tile of Br rows):          // one thread block on the GPU
//!     load the Q tile; start one OnlineSoftmax per row  // registers: m, l, acc
//!     for each K/V tile of Bc keys that the mask can reach:
//!         load the K and V tiles                       // shared memory
//!         S = Q_tile · K_tileᵀ, masked entries −∞      // first matmul (QKᵀ)
//!         every row: update(m, l, acc) with S and V    // online softmax + second matmul (PV)
//!     O = acc / l, LSE = ln 2 · (m + log2 l)           // epilogue: write O and LSE
//! ```
//!
//! `Br` and `Bc` need not divide the sequence lengths: the last tiles are simply shorter, which
//! is the bounds-checking every kernel has to get right.

use crate::dtype::LowPrecision;
use crate::mask::Mask;
use crate::oracle::Attention;
use crate::shape::Shape;
use crate::softmax::{MASKED, OnlineSoftmax};
use std::ops::Range;

/// Tile sizes and the optional rounding of P that tensor-core kernels perform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileConfig {
    /// Query rows per tile (per thread block).
    pub br: usize,
    /// Keys per K/V tile (per inner-loop iteration).
    pub bc: usize,
    /// Round P to this dtype before the PV product, as a bf16/f16 tensor-core kernel must;
    /// `None` keeps everything in f64.
    pub p_precision: Option<LowPrecision>,
}

impl TileConfig {
    /// Exact f64 tiles of `br × bc`.
    pub fn new(br: usize, bc: usize) -> Self {
        assert!(br > 0 && bc > 0, "tile sizes must be positive");
        TileConfig {
            br,
            bc,
            p_precision: None,
        }
    }
}

/// One visit of the inner loop: Q tile `q_tile` (rows `rows`) met K/V tile `kv_tile` (keys
/// `cols`) for this batch element and head. Reported to the observer of
/// [`flash_forward_with`], e.g. to draw which tiles a causal kernel skips.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileStep {
    pub batch: usize,
    pub head: usize,
    pub q_tile: usize,
    pub kv_tile: usize,
    pub rows: Range<usize>,
    pub cols: Range<usize>,
}

/// The tiled FA2 forward pass with `br × bc` tiles in exact f64. Equal to
/// [`crate::oracle::attention`] up to rounding, for any tile sizes.
#[allow(clippy::too_many_arguments)]
pub fn flash_forward(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    br: usize,
    bc: usize,
) -> Attention {
    flash_forward_with(
        q,
        k,
        v,
        shape,
        mask,
        scale,
        &TileConfig::new(br, bc),
        &mut |_| {},
    )
}

/// The K/V tiles that Q rows `rows` must visit: from the tile holding the first key any of the
/// rows may see to the tile holding the last one. Kernels compute the same bounds
/// (`n_block_min`, `n_block_max`) so that causal and windowed attention skip fully masked tiles.
pub fn kv_tiles_for_rows(
    mask: &Mask,
    rows: Range<usize>,
    shape: &Shape,
    bc: usize,
) -> Range<usize> {
    let (mut lo, mut hi) = (usize::MAX, 0);
    for i in rows {
        let keys = mask.key_range(i, shape.seqlen_q, shape.seqlen_k);
        if !keys.is_empty() {
            lo = lo.min(keys.start);
            hi = hi.max(keys.end);
        }
    }
    if lo >= hi {
        0..0
    } else {
        lo / bc..hi.div_ceil(bc)
    }
}

/// [`flash_forward`] with a full [`TileConfig`] and an observer called after every inner-loop
/// step, in the order a single thread block would execute them.
#[allow(clippy::too_many_arguments)]
pub fn flash_forward_with(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    config: &TileConfig,
    on_tile: &mut dyn FnMut(&TileStep),
) -> Attention {
    shape.check_inputs(q, k, v);
    let TileConfig {
        br,
        bc,
        p_precision,
    } = *config;
    assert!(br > 0 && bc > 0, "tile sizes must be positive");
    let d = shape.head_dim;
    let mut out = Attention {
        o: vec![0.0; shape.o_len()],
        lse: vec![0.0; shape.lse_len()],
    };
    for batch in 0..shape.batch {
        for head in 0..shape.heads {
            let kv_head = shape.kv_head(head);
            for q_tile in 0..shape.seqlen_q.div_ceil(br) {
                let rows = q_tile * br..((q_tile + 1) * br).min(shape.seqlen_q);
                let q_block = load_q_tile(q, shape, batch, head, rows.clone());
                let mut states = vec![OnlineSoftmax::empty(d, scale); rows.len()];

                for kv_tile in kv_tiles_for_rows(mask, rows.clone(), shape, bc) {
                    let cols = kv_tile * bc..((kv_tile + 1) * bc).min(shape.seqlen_k);
                    let k_block = load_kv_tile(k, shape, batch, kv_head, cols.clone());
                    let v_block = load_kv_tile(v, shape, batch, kv_head, cols.clone());

                    for (r, state) in states.iter_mut().enumerate() {
                        let i = rows.start + r;
                        let q_i = &q_block[r * d..(r + 1) * d];
                        let scores: Vec<f64> = cols
                            .clone()
                            .zip(k_block.chunks_exact(d))
                            .map(|(j, k_j)| {
                                if mask.allows(i, j, shape.seqlen_q, shape.seqlen_k) {
                                    q_i.iter().zip(k_j).map(|(a, b)| a * b).sum()
                                } else {
                                    MASKED
                                }
                            })
                            .collect();
                        match p_precision {
                            None => state.update(&scores, &v_block),
                            Some(p) => state.update_rounding_p(&scores, &v_block, p),
                        }
                    }
                    on_tile(&TileStep {
                        batch,
                        head,
                        q_tile,
                        kv_tile,
                        rows: rows.clone(),
                        cols,
                    });
                }

                // Epilogue: normalize and write O and LSE for every row of the tile.
                for (r, state) in states.iter().enumerate() {
                    let i = rows.start + r;
                    let (o, lse) = state.finish();
                    let start = shape.q_index(batch, i, head, 0);
                    out.o[start..start + d].copy_from_slice(&o);
                    out.lse[shape.lse_index(batch, head, i)] = lse;
                }
            }
        }
    }
    out
}

/// Gathers Q rows `rows` of one head into a dense `[rows.len(), head_dim]` tile, as a kernel
/// copies them from global to shared memory.
fn load_q_tile(
    q: &[f64],
    shape: &Shape,
    batch: usize,
    head: usize,
    rows: Range<usize>,
) -> Vec<f64> {
    let d = shape.head_dim;
    rows.flat_map(|i| {
        let start = shape.q_index(batch, i, head, 0);
        q[start..start + d].iter().copied()
    })
    .collect()
}

/// Gathers K or V rows `cols` of one kv head into a dense `[cols.len(), head_dim]` tile.
fn load_kv_tile(
    x: &[f64],
    shape: &Shape,
    batch: usize,
    kv_head: usize,
    cols: Range<usize>,
) -> Vec<f64> {
    let d = shape.head_dim;
    cols.flat_map(|j| {
        let start = shape.kv_index(batch, j, kv_head, 0);
        x[start..start + d].iter().copied()
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::attention;
    use approx::assert_relative_eq;

    fn problem(shape: &Shape) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let q = (0..shape.q_len())
            .map(|i| (i as f64 * 0.31).sin())
            .collect();
        let k = (0..shape.kv_len())
            .map(|i| (i as f64 * 0.77).cos())
            .collect();
        let v = (0..shape.kv_len())
            .map(|i| (i as f64 * 0.19).sin() * 3.0)
            .collect();
        (q, k, v)
    }

    #[test]
    fn causal_square_problem_skips_tiles_above_the_diagonal() {
        let shape = Shape::mha(1, 1, 8, 8, 2);
        let (q, k, v) = problem(&shape);
        let mut visited = Vec::new();
        flash_forward_with(
            &q,
            &k,
            &v,
            &shape,
            &Mask::causal(),
            0.5,
            &TileConfig::new(4, 4),
            &mut |s| visited.push((s.q_tile, s.kv_tile)),
        );
        assert_eq!(visited, vec![(0, 0), (1, 0), (1, 1)]);
    }

    #[test]
    fn unmasked_problem_visits_every_tile_including_ragged_ones() {
        let shape = Shape::mha(1, 1, 5, 7, 2);
        let (q, k, v) = problem(&shape);
        let mut cols = Vec::new();
        flash_forward_with(
            &q,
            &k,
            &v,
            &shape,
            &Mask::None,
            0.5,
            &TileConfig::new(3, 3),
            &mut |s| cols.push((s.rows.clone(), s.cols.clone())),
        );
        assert_eq!(
            cols,
            vec![
                (0..3, 0..3),
                (0..3, 3..6),
                (0..3, 6..7),
                (3..5, 0..3),
                (3..5, 3..6),
                (3..5, 6..7)
            ]
        );
    }

    #[test]
    fn sliding_window_starts_the_inner_loop_late() {
        let shape = Shape::mha(1, 1, 16, 16, 1);
        let tiles = kv_tiles_for_rows(&Mask::sliding_window(Some(2), Some(0)), 12..16, &shape, 4);
        assert_eq!(tiles, 2..4);
        let none = kv_tiles_for_rows(&Mask::causal(), 0..2, &Shape::mha(1, 1, 4, 2, 1), 4);
        assert_eq!(none, 0..0);
    }

    #[test]
    fn tiled_matches_oracle_on_a_fixed_problem() {
        let shape = Shape::new(2, 4, 2, 9, 13, 4);
        let (q, k, v) = problem(&shape);
        let mask = Mask::causal();
        let want = attention(&q, &k, &v, &shape, &mask, 0.5);
        let got = flash_forward(&q, &k, &v, &shape, &mask, 0.5, 4, 5);
        assert_relative_eq!(got.o.as_slice(), want.o.as_slice(), epsilon = 1e-13);
        assert_relative_eq!(got.lse.as_slice(), want.lse.as_slice(), epsilon = 1e-13);
    }

    #[test]
    fn rounding_p_perturbs_the_output_by_about_the_unit_roundoff() {
        let shape = Shape::mha(1, 1, 8, 64, 4);
        let (q, k, v) = problem(&shape);
        let exact = flash_forward(&q, &k, &v, &shape, &Mask::None, 0.5, 4, 16);
        let config = TileConfig {
            p_precision: Some(LowPrecision::Bf16),
            ..TileConfig::new(4, 16)
        };
        let rounded =
            flash_forward_with(&q, &k, &v, &shape, &Mask::None, 0.5, &config, &mut |_| {});
        let err = exact
            .o
            .iter()
            .zip(&rounded.o)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        // |v| ≤ 3 and each p moves by at most u·p, so |ΔO| ≤ 3u.
        assert!(
            err > 0.0 && err <= 3.0 * LowPrecision::Bf16.unit_roundoff(),
            "{err}"
        );
        assert_eq!(exact.lse, rounded.lse);
    }
}
