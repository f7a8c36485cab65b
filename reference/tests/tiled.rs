//! Properties of the tiled FA2 loop and of split-KV: reorganizing the work into tiles or
//! chunks changes nothing but rounding, whatever the tile sizes and whatever the partition.

mod common;

use common::{check_close, problem, problem_with, shape};
use proptest::prelude::*;
use reference::oracle::all_rows;
use reference::softmax::OnlineSoftmax;
use reference::split_kv::{partial_state, split_forward};
use reference::tiled::{TileConfig, flash_forward, flash_forward_with};
use reference::{LowPrecision, attention};
use std::ops::Range;

/// Consecutive chunks of `0..n` from arbitrary cut points; repeated cuts give empty chunks.
fn partition(n: usize, cuts: &[usize]) -> Vec<Range<usize>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (n + 1)).collect();
    points.extend([0, n]);
    points.sort_unstable();
    points.windows(2).map(|w| w[0]..w[1]).collect()
}

proptest! {
    #[test]
    fn tiled_equals_oracle_for_any_tile_sizes(
        p in problem_with(shape(20, 6)),
        br in 1usize..=12,
        bc in 1usize..=12,
    ) {
        let want = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        let got = flash_forward(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, br, bc);
        check_close("O", &got.o, &want.o, 1e-12, 1e-10)?;
        check_close("LSE", &got.lse, &want.lse, 1e-12, 1e-12)?;
    }

    #[test]
    fn tiled_visits_exactly_the_tiles_with_unmasked_entries(
        p in problem_with(shape(20, 2)),
        br in 1usize..=8,
        bc in 1usize..=8,
    ) {
        let s = p.shape;
        let mut visited = Vec::new();
        flash_forward_with(&p.q, &p.k, &p.v, &s, &p.mask, p.scale, &TileConfig::new(br, bc), &mut |step| {
            if step.batch == 0 && step.head == 0 {
                visited.push((step.q_tile, step.kv_tile));
            }
        });
        for q_tile in 0..s.seqlen_q.div_ceil(br) {
            for kv_tile in 0..s.seqlen_k.div_ceil(bc) {
                let rows = q_tile * br..((q_tile + 1) * br).min(s.seqlen_q);
                let cols = kv_tile * bc..((kv_tile + 1) * bc).min(s.seqlen_k);
                let needed = rows
                    .clone()
                    .any(|i| cols.clone().any(|j| p.mask.allows(i, j, s.seqlen_q, s.seqlen_k)));
                prop_assert_eq!(
                    visited.contains(&(q_tile, kv_tile)),
                    needed,
                    "tile ({}, {}) of {:?} with {:?}", q_tile, kv_tile, s, p.mask
                );
            }
        }
    }

    #[test]
    fn tiled_with_rounded_p_stays_within_unit_roundoff(
        p in problem(),
        br in 1usize..=8,
        bc in 1usize..=8,
    ) {
        let exact = flash_forward(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, br, bc);
        for precision in [LowPrecision::Bf16, LowPrecision::F16] {
            let config = TileConfig { p_precision: Some(precision), ..TileConfig::new(br, bc) };
            let rounded = flash_forward_with(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, &config, &mut |_| {});
            // Each p_j moves by at most u·p_j and the weights sum to one: |ΔO| ≤ u·max|v|.
            let v_max = p.v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            check_close(precision.name(), &rounded.o, &exact.o, precision.unit_roundoff() * v_max + 1e-12, 0.0)?;
            prop_assert_eq!(&rounded.lse, &exact.lse);
        }
    }

    #[test]
    fn split_kv_combine_equals_oracle(
        p in problem_with(shape(16, 6)),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let chunks = partition(p.shape.seqlen_k, &cuts);
        let want = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        let got = split_forward(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, &chunks);
        check_close("O", &got.o, &want.o, 1e-12, 1e-10)?;
        check_close("LSE", &got.lse, &want.lse, 1e-12, 1e-12)?;
    }

    #[test]
    fn split_kv_merge_of_online_states_equals_oracle(
        p in problem_with(shape(16, 6)),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
        reverse in any::<bool>(),
    ) {
        // Same as the combine above, but through OnlineSoftmax::merge and in either order:
        // the combine does not care which split finishes first.
        let mut chunks = partition(p.shape.seqlen_k, &cuts);
        if reverse {
            chunks.reverse();
        }
        let want = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        for id in all_rows(&p.shape) {
            let merged = chunks.iter().fold(OnlineSoftmax::empty(p.shape.head_dim, p.scale), |acc, keys| {
                acc.merge(&partial_state(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale, id, keys.clone()))
            });
            let (o, lse) = merged.finish();
            let start = p.shape.q_index(id.batch, id.row, id.head, 0);
            check_close("O", &o, &want.o[start..start + p.shape.head_dim], 1e-12, 1e-10)?;
            check_close("LSE", &[lse], &[want.lse[p.shape.lse_index(id.batch, id.head, id.row)]], 1e-12, 1e-12)?;
        }
    }
}
