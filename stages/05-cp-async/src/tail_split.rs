//! The tail split's host side (book: stage 5, step 13): whether to split the last wave,
//! and, in the tests, the partition `tail_split.cuh` gives the kernels, checked by its
//! defining properties.

// ANCHOR: tail_plan
/// The last wave's split (book: stage 5, step 13): the last `tiles` query tiles of the
/// grid are shared by `blocks` blocks, each taking an equal run of their key tiles
/// (`tail_split.cuh`), and a second kernel merges the parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailSplit {
    pub tiles: u32,
    pub blocks: u32,
}

/// Key tiles a split block takes at least, so that loading Q and writing the parts stay
/// small beside the products.
pub const MIN_RUN: u64 = 8;
/// What the combine kernel costs, in key tiles of the main loop (its launch and a read of
/// every part): a split that saves less than this is not made.
pub const SPLIT_COST: u64 = 4;
/// The most split blocks: the workspace holds two parts for each.
pub const MAX_SPLIT_BLOCKS: u32 = 512;

/// Whether and how to split, for a grid of `tiles` equal query tiles of `kv_tiles` key
/// tiles each, on a GPU that holds `slots` blocks at once. Without a split the last wave,
/// `tiles % slots` tiles, takes as long as a full one; with it, the blocks that share those
/// tiles' keys take `tiles % slots * kv_tiles / blocks` key tiles each.
pub fn tail_split(tiles: u32, kv_tiles: u32, slots: u32) -> Option<TailSplit> {
    let rem = tiles % slots.max(1);
    let total = u64::from(rem) * u64::from(kv_tiles);
    let blocks = u64::from(slots.min(MAX_SPLIT_BLOCKS)).min(total / MIN_RUN) as u32;
    let run = total.div_ceil(u64::from(blocks.max(1)));
    (rem > 0 && blocks > rem && run + SPLIT_COST < u64::from(kv_tiles))
        .then_some(TailSplit { tiles: rem, blocks })
}
// ANCHOR_END: tail_plan

#[cfg(test)]
mod tests {
    use super::*;

    // The header's functions, built for the host by build.rs.
    unsafe extern "C" {
        fn flashlab_split_run(tiles: i32, kv_tiles: i32, blocks: i32, j: i32, begin: *mut i64, end: *mut i64);
        fn flashlab_split_block_of(tiles: i32, kv_tiles: i32, blocks: i32, i: i64) -> i32;
        fn flashlab_split_part(
            tiles: i32,
            kv_tiles: i32,
            blocks: i32,
            j: i32,
            part: i32,
            tile: *mut i32,
            kv_first: *mut i32,
            kv_limit: *mut i32,
        );
        fn flashlab_split_part_in(tiles: i32, kv_tiles: i32, blocks: i32, j: i32, tile: i32) -> i32;
    }
    fn run(t: i32, kv: i32, b: i32, j: i32) -> (i64, i64) {
        let (mut begin, mut end) = (0, 0);
        // SAFETY: writes two integers.
        unsafe { flashlab_split_run(t, kv, b, j, &mut begin, &mut end) };
        (begin, end)
    }
    fn part(t: i32, kv: i32, b: i32, j: i32, p: i32) -> (i32, i32, i32) {
        let (mut tile, mut first, mut limit) = (0, 0, 0);
        // SAFETY: writes three integers.
        unsafe { flashlab_split_part(t, kv, b, j, p, &mut tile, &mut first, &mut limit) };
        (tile, first, limit)
    }

    /// The issue's shapes on an H200 (132 SMs, two blocks each): 16384 and 8192 split their
    /// last wave over every slot; at 4096 the last wave is 248 of 264 slots, and splitting
    /// would save 3 of 64 key tiles, less than the combine costs.
    #[test]
    fn the_issue_shapes_on_an_h200() {
        let slots = 264;
        // 16 heads x seqlen / 128 query tiles, seqlen / 64 key tiles each.
        assert_eq!(tail_split(2048, 256, slots), Some(TailSplit { tiles: 200, blocks: 264 }));
        assert_eq!(tail_split(1024, 128, slots), Some(TailSplit { tiles: 232, blocks: 264 }));
        assert_eq!(tail_split(512, 64, slots), None);
        // Fewer tiles than slots: all of them split, 8 key tiles a block.
        assert_eq!(tail_split(128, 16, slots), Some(TailSplit { tiles: 128, blocks: 256 }));
        // Whole waves: nothing to balance.
        assert_eq!(tail_split(528, 64, slots), None);
        // Too few keys to cut: runs would be under MIN_RUN or save less than SPLIT_COST.
        assert_eq!(tail_split(100, 2, slots), None);
        assert_eq!(tail_split(1, 8, slots), None);
    }

    /// Whenever it splits, the plan keeps the kernels' assumptions: more blocks than tiles
    /// (so a run spans two tiles at most), at most MAX_SPLIT_BLOCKS blocks (the workspace),
    /// at least MIN_RUN key tiles a block, and a last wave shorter than a tile's keys.
    #[test]
    fn the_plan_keeps_the_kernels_assumptions() {
        for slots in [1, 2, 3, 7, 64, 264, 296, 1000] {
            for tiles in 1..300 {
                for kv_tiles in [1, 2, 8, 9, 17, 64, 100, 256] {
                    let Some(s) = tail_split(tiles, kv_tiles, slots) else { continue };
                    assert_eq!(s.tiles, tiles % slots);
                    assert!(s.blocks > s.tiles && s.blocks <= slots.min(MAX_SPLIT_BLOCKS));
                    let total = u64::from(s.tiles) * u64::from(kv_tiles);
                    assert!(total / u64::from(s.blocks) >= MIN_RUN);
                    assert!(total.div_ceil(u64::from(s.blocks)) + SPLIT_COST < u64::from(kv_tiles));
                }
            }
        }
    }

    /// The partition: the runs tile the key tiles end to end, equal to within one;
    /// split_block_of inverts them; every (tile, key tile) lies in exactly one non-empty
    /// part, part 0 or 1; and the parts the combine kernel gathers for a tile (blocks
    /// split_block_of(first) ..= split_block_of(last), part split_part_in) are exactly the
    /// ones that cover it.
    #[test]
    fn the_parts_cover_every_key_tile_once() {
        for (tiles, kv_tiles, blocks) in [(1, 16, 2), (128, 16, 256), (200, 256, 264), (232, 128, 264), (5, 9, 7), (3, 20, 40), (7, 8, 8), (10, 1000, 13)] {
            let total = i64::from(tiles) * i64::from(kv_tiles);
            let mut next = 0;
            let (mut shortest, mut longest) = (i64::MAX, 0);
            let mut owner = vec![None; total as usize];
            for j in 0..blocks {
                let (begin, end) = run(tiles, kv_tiles, blocks, j);
                assert_eq!(begin, next, "runs are contiguous");
                next = end;
                shortest = shortest.min(end - begin);
                longest = longest.max(end - begin);
                for i in begin..end {
                    // SAFETY: pure function.
                    assert_eq!(unsafe { flashlab_split_block_of(tiles, kv_tiles, blocks, i) }, j);
                }
                for p in 0..3 {
                    let (tile, first, limit) = part(tiles, kv_tiles, blocks, j, p);
                    if first >= limit {
                        continue;
                    }
                    assert!(p < 2, "a third part: block {j}");
                    // SAFETY: pure function.
                    assert_eq!(unsafe { flashlab_split_part_in(tiles, kv_tiles, blocks, j, tile) }, p);
                    for kv in first..limit {
                        let i = (i64::from(tile) * i64::from(kv_tiles) + i64::from(kv)) as usize;
                        assert!(owner[i].is_none(), "key tile {kv} of tile {tile} in two parts");
                        owner[i] = Some((j, p));
                    }
                }
            }
            assert_eq!(next, total);
            assert!(longest - shortest <= 1);
            assert!(owner.iter().all(Option::is_some), "every key tile in a part");
            for tile in 0..tiles {
                let first = i64::from(tile) * i64::from(kv_tiles);
                // SAFETY: pure functions.
                let (j0, j1) = unsafe {
                    (
                        flashlab_split_block_of(tiles, kv_tiles, blocks, first),
                        flashlab_split_block_of(tiles, kv_tiles, blocks, first + i64::from(kv_tiles) - 1),
                    )
                };
                let mut gathered: Vec<(i32, i32)> = (j0..=j1)
                    .map(|j| (j, unsafe { flashlab_split_part_in(tiles, kv_tiles, blocks, j, tile) }))
                    .collect();
                let mut covering: Vec<(i32, i32)> = owner[first as usize..(first + i64::from(kv_tiles)) as usize]
                    .iter()
                    .map(|o| o.unwrap())
                    .collect();
                covering.dedup();
                gathered.sort();
                assert_eq!(gathered, covering, "tile {tile} of ({tiles}, {kv_tiles}, {blocks})");
            }
        }
    }
}
