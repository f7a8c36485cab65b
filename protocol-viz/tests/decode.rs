//! Stage 14's index functions: the kernels' own (decode_index.cuh, host build) against
//! protocol-viz's models over a grid of inputs, so the models say what the kernels do; and
//! the numbers the book's three decode figures show.
use protocol_viz::decode::{
    self, BLOCK_KV, DecodeFns, PagedCache, heuristic_eligible, kv_bytes, kv_bytes_unpacked,
    split_plan,
};
use protocol_viz::decode_index::{KvCache, PackedRow, SplitTiles};

const K: DecodeFns = DecodeFns::KERNELS;
const M: DecodeFns = DecodeFns::MODELS;

fn st(begin: u32, count: u32) -> SplitTiles {
    SplitTiles { begin, count }
}

/// `s` as the SVG writes it in text and titles.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn pr(token: u32, head: u32) -> PackedRow {
    PackedRow { token, head }
}

#[test]
fn split_tiles_model_is_the_kernels_function() {
    for block_kv in [16, 64] {
        for seqlen_k in 1..=700 {
            for tiles_per_split in 1..=6 {
                for split in 0..12 {
                    assert_eq!(
                        (M.split_tiles)(split, tiles_per_split, seqlen_k, block_kv),
                        (K.split_tiles)(split, tiles_per_split, seqlen_k, block_kv),
                        "split {split} tps {tiles_per_split} seqlen {seqlen_k} block {block_kv}"
                    );
                }
            }
        }
    }
}

#[test]
fn unpack_row_model_is_the_kernels_function() {
    for group in 1..=16 {
        for kv_head in 0..8 {
            for r in 0..64 {
                assert_eq!(
                    (M.unpack_row)(group, kv_head, r),
                    (K.unpack_row)(group, kv_head, r),
                    "group {group} kv_head {kv_head} row {r}"
                );
            }
        }
    }
}

#[test]
fn cache_row_model_is_the_kernels_function() {
    for capacity in [1, 7, 100] {
        let cache = KvCache::Contiguous { capacity };
        for b in 0..4 {
            for j in 0..capacity {
                assert_eq!((M.cache_row)(&cache, b, j), (K.cache_row)(&cache, b, j));
            }
        }
    }
    // Paged, every entry of the table (a sequence's own pages and the padding past them),
    // for the page sizes serving engines use; and past the table, refused by both.
    for page_size in [16, 32, 64] {
        let lens: [u32; 4] = [3 * page_size + 5, 1, 2 * page_size, 5 * page_size - 1];
        let used: u32 = lens.iter().map(|n| n.div_ceil(page_size)).sum();
        let pool = used + (used / 8).max(2);
        // A fixed shuffle: 5 is coprime with every pool size here.
        let order: Vec<u32> = (0..pool).map(|i| (5 * i + 3) % pool).collect();
        let paged = PagedCache::new(&lens, page_size, &order);
        let cache = paged.kv_cache();
        for b in 0..lens.len() as u32 {
            for j in 0..paged.pages_per_seq * page_size {
                let row = (K.cache_row)(&cache, b, j);
                assert!(row.is_some());
                assert_eq!(
                    (M.cache_row)(&cache, b, j),
                    row,
                    "b {b} j {j} page {page_size}"
                );
            }
        }
        let past = paged.pages_per_seq * page_size;
        assert_eq!((K.cache_row)(&cache, lens.len() as u32 - 1, past), None);
        assert_eq!((M.cache_row)(&cache, lens.len() as u32 - 1, past), None);
    }
}

#[test]
fn the_figures_draw_the_same_from_models_and_kernels() {
    assert_eq!(
        decode::split_combine_svg_with(&M, 1000, 5),
        decode::split_combine_svg_with(&K, 1000, 5)
    );
    assert_eq!(
        decode::gqa_packing_svg_with(&M, 32, 8, 2, 1, 8192, 128),
        decode::gqa_packing_svg_with(&K, 32, 8, 2, 1, 8192, 128)
    );
    assert_eq!(
        decode::page_table_svg_with(&M),
        decode::page_table_svg_with(&K)
    );
}

#[test]
fn the_book_example_of_split_kv() {
    assert_eq!(BLOCK_KV, 64);
    // 1000 keys: 16 tiles, the last with keys 960-999; 5 splits of ceil(16 / 5) = 4 tiles
    // cover them in 4, and split 4 gets none.
    let plan = split_plan(&K, 1000, 5);
    assert_eq!((plan.key_tiles, plan.tiles_per_split), (16, 4));
    assert_eq!(
        plan.splits,
        [st(0, 4), st(4, 4), st(8, 4), st(12, 4), st(16, 0)]
    );
    assert_eq!(plan.tile_keys(15), (960, 999));
    assert_eq!(plan.split_keys(0), Some((0, 255)));
    assert_eq!(plan.split_keys(3), Some((768, 999)));
    assert_eq!(plan.split_keys(4), None);
    // The heuristic never takes 5 splits of 16 tiles (4 give the same tiles per split).
    assert!(!heuristic_eligible(16, 5));
    assert!(heuristic_eligible(16, 4));
    // 3 splits: 6, 6 and a short 4.
    assert_eq!(
        split_plan(&K, 1000, 3).splits,
        [st(0, 6), st(6, 6), st(12, 4)]
    );

    let svg = decode::split_combine_svg(1000, 5);
    for shown in [
        "16 tiles of 64 keys; tiles_per_split = ceil(16 / 5) = 4\n",
        "\nkeys 960-999*\n",
        "\nO_4 = 0\n",
        "\nLSE_4 = -inf\n",
        "\nO_3, LSE_3\n",
        "\nkeys 768-999\n",
        "tile 15: keys 960-999 (40 of 64; rows 40-63 are zero-filled and masked), split 3 (blockIdx.x = 3)",
        "split 4: the block with blockIdx.x = 4 has no tiles",
    ] {
        assert!(svg.contains(&escaped(shown)), "{shown}");
    }
}

#[test]
fn the_book_example_of_gqa_packing() {
    // Group 4 (32 heads over 8 K/V heads), 2 new tokens, K/V head 1: rows 0-7 are tokens
    // 0 and 1 of heads 4-7, rows 8-15 zeros.
    let tile = decode::packed_tile(&K, 4, 2, 1);
    assert_eq!(tile.len(), 16);
    let expect: Vec<Option<PackedRow>> = [
        pr(0, 4),
        pr(0, 5),
        pr(0, 6),
        pr(0, 7),
        pr(1, 4),
        pr(1, 5),
        pr(1, 6),
        pr(1, 7),
    ]
    .into_iter()
    .map(Some)
    .chain(std::iter::repeat_n(None, 8))
    .collect();
    assert_eq!(tile, expect);

    // DecodeProblem::uniform(1, 32, 8, 1, 8192, 128): 32 MiB packed, 128 MiB unpacked
    // (harness/src/decode/mod.rs pins the same numbers).
    assert_eq!(kv_bytes(8192, 8, 128), 32 << 20);
    assert_eq!(kv_bytes_unpacked(8192, 32, 8, 128), 128 << 20);

    let svg = decode::gqa_packing_svg(32, 8, 2, 1, 8192, 128);
    for shown in [
        "\ntoken 1 · query head 7\n",
        "\nzero: no query\n",
        "\n32 MiB\n",
        "\n128 MiB\n",
        "2 (K, V) · 8192 · 8 · 128 · 2 B = 33554432 bytes = 32 MiB",
        "packed row 5 = unpack_row(group 4, K/V head 1, 5): token 5 / 4 = 1, head 1 x 4 + 5 % 4 = 5",
    ] {
        assert!(svg.contains(&escaped(shown)), "{shown}");
    }
    assert_eq!(svg.matches("\nzero: no query\n").count(), 8);
}

#[test]
fn the_book_example_of_a_paged_cache() {
    let cache = PagedCache::book();
    // 3 + 2 + 5 pages used, 2 spare; entries past a sequence's pages point at spare 3.
    assert_eq!((cache.pool_pages, cache.pages_per_seq), (12, 5));
    assert_eq!(cache.spares, [3, 6]);
    assert_eq!(cache.table, [7, 2, 10, 3, 3, 4, 0, 3, 3, 3, 9, 5, 11, 1, 8]);
    let kv = cache.kv_cache();
    for (b, j, row) in [
        (0, 0, 7 * 16),
        (0, 37, 10 * 16 + 5),
        (1, 16, 0),
        (2, 64, 8 * 16),
        (2, 69, 8 * 16 + 5),
    ] {
        assert_eq!((K.cache_row)(&kv, b, j), Some(row), "seq {b} key {j}");
    }
    // Every key has its own row; the last pages are partly filled, spares empty.
    let rows = cache.rows(&K);
    let filled = |page: usize| rows[page * 16..(page + 1) * 16].iter().flatten().count();
    assert_eq!(
        (0..12).map(filled).collect::<Vec<_>>(),
        [1, 16, 16, 0, 16, 16, 0, 16, 6, 16, 8, 16]
    );

    let svg = decode::page_table_svg();
    for shown in [
        "seq 0, key 37: block_table[0][37 >> 4 = 2] = 10, row 37 & 15 = 5 → cache row 165",
        "seq 1, key 16: block_table[1][16 >> 4 = 1] = 0, row 16 & 15 = 0 → cache row 0",
        "seq 2, key 69: block_table[2][69 >> 4 = 4] = 8, row 69 & 15 = 5 → cache row 133",
        "\n8/16 rows\n",
        "\ntable padding → here\n",
        "cache row 165 = page 10, row 5: sequence 0, key 37",
    ] {
        assert!(svg.contains(&escaped(shown)), "{shown}");
    }
}

#[test]
fn the_decode_figures_fit_the_column_and_title_their_cells() {
    for svg in [
        decode::split_combine_svg(1000, 5),
        decode::gqa_packing_svg(32, 8, 2, 1, 8192, 128),
        decode::page_table_svg(),
    ] {
        assert!(svg.contains(r#"width="740""#));
        for (i, _) in svg.match_indices("font-size=\"") {
            let size: u32 = svg[i + 11..].split('"').next().unwrap().parse().unwrap();
            assert!(size >= 10, "font-size {size}");
        }
        // Every cell group carries a tooltip.
        assert_eq!(
            svg.matches(r#"<g class="cell">"#).count(),
            svg.matches(
                r#"<g class="cell">
<title>"#
            )
            .count()
        );
        assert!(svg.matches(r#"class="cell""#).count() > 10);
    }
}
