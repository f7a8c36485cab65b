//! Stage 14 (flash decode): which key tiles each split covers, which (token, query head)
//! each packed row of a GQA tile is, and where a key lives in a paged cache.
//!
//! The book's figures take the kernels' own functions (`stages/include/flashlab/decode_index.cuh`
//! through [`crate::kernel_fns`]) on native targets and layout-viz's models of them on
//! wasm32 ([`DecodeFns`]); `tests/decode.rs` holds the two equal over a grid of inputs.
//! The tile shape is the stage's own `src/tiles.rs`. Book: "Stage 14: flash decode".

#[cfg(not(target_arch = "wasm32"))]
use crate::kernel_fns;

/// Stage 14's tile shape, the one definition its kernel and its launcher use.
#[allow(dead_code)]
mod stage14 {
    include!("../../stages/14-flash-decode/src/tiles.rs");
}
/// Keys per K/V tile of the decode kernel.
pub const BLOCK_KV: u32 = stage14::BLOCK_KV;
/// Packed query rows per block: one m16 tile.
pub const ROWS: u32 = stage14::ROWS;
/// Bytes per element of the cache (bf16 or f16), as `DecodeProblem::kv_bytes` counts.
pub const ELEM_BYTES: u64 = 2;

/// The key tiles `[begin, begin + count)` one split covers (`flashlab::SplitTiles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitTiles {
    pub begin: u32,
    pub count: u32,
}

/// The query token and head of a packed row (`flashlab::PackedRow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedRow {
    pub token: u32,
    pub head: u32,
}

/// A K/V cache as `cache_row` sees it.
#[derive(Debug, Clone, Copy)]
pub enum KvCache<'a> {
    /// `capacity` rows per sequence, sequence after sequence.
    Contiguous { capacity: u32 },
    /// A pool of pages of `page_size` rows and the block table `[batch, pages_per_seq]`.
    Paged {
        table: &'a [i32],
        pages_per_seq: u32,
        page_size: u32,
    },
}

/// The decode kernels' index functions the figures are computed from: the kernels' own
/// (`KERNELS`, the C++ host build, native targets only) or layout-viz's models of them
/// (`MODELS`), held equal by `tests/decode.rs`, as `bank::IndexFns` is for the bank maps.
#[derive(Clone, Copy)]
pub struct DecodeFns {
    /// `split_tiles(split, tiles_per_split, seqlen_k, block_kv)`.
    pub split_tiles: fn(u32, u32, u32, u32) -> SplitTiles,
    /// `cache_row(cache, b, j)`: the cache row of key j of sequence b; `None` where the
    /// kernel would read outside the block table.
    pub cache_row: fn(&KvCache<'_>, u32, u32) -> Option<u64>,
    /// `unpack_row(group, kv_head, r)`.
    pub unpack_row: fn(u32, u32, u32) -> PackedRow,
}

/// Split `split` takes the next `tiles_per_split` tiles, cut at the sequence's last tile.
fn model_split_tiles(split: u32, tiles_per_split: u32, seqlen_k: u32, block_kv: u32) -> SplitTiles {
    let begin = split * tiles_per_split;
    let end = (begin + tiles_per_split).min(seqlen_k.div_ceil(block_kv));
    SplitTiles {
        begin,
        count: end.saturating_sub(begin),
    }
}

/// Division and remainder, as the harness's `DecodeInputs::key_row` states it (the kernel
/// shifts and masks).
fn model_cache_row(cache: &KvCache<'_>, b: u32, j: u32) -> Option<u64> {
    match *cache {
        KvCache::Contiguous { capacity } => Some(u64::from(b) * u64::from(capacity) + u64::from(j)),
        KvCache::Paged {
            table,
            pages_per_seq,
            page_size,
        } => {
            if !page_size.is_power_of_two() {
                return None;
            }
            let entry = usize::try_from(b * pages_per_seq + j / page_size).ok()?;
            let page = u64::try_from(*table.get(entry)?).ok()?;
            Some(page * u64::from(page_size) + u64::from(j % page_size))
        }
    }
}

fn model_unpack_row(group: u32, kv_head: u32, r: u32) -> PackedRow {
    PackedRow {
        token: r / group,
        head: kv_head * group + r % group,
    }
}

impl DecodeFns {
    /// The kernels' own functions, from the host build.
    #[cfg(not(target_arch = "wasm32"))]
    pub const KERNELS: DecodeFns = DecodeFns {
        split_tiles: kernel_fns::split_tiles,
        cache_row: kernel_fns::cache_row,
        unpack_row: kernel_fns::unpack_row,
    };

    /// layout-viz's models of the same functions.
    pub const MODELS: DecodeFns = DecodeFns {
        split_tiles: model_split_tiles,
        cache_row: model_cache_row,
        unpack_row: model_unpack_row,
    };

    /// What the figures use: the kernels' own functions wherever they can be compiled.
    #[cfg(not(target_arch = "wasm32"))]
    pub const DEFAULT: DecodeFns = DecodeFns::KERNELS;
    #[cfg(target_arch = "wasm32")]
    pub const DEFAULT: DecodeFns = DecodeFns::MODELS;
}

// ---------------------------------------------------------------------------------------
// Split-KV

/// How a sequence's keys are cut: the launcher's `tiles_per_split` (the longest
/// sequence's tiles over the splits, here the one sequence's) and each split's tiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitPlan {
    pub seqlen_k: u32,
    pub key_tiles: u32,
    pub tiles_per_split: u32,
    pub splits: Vec<SplitTiles>,
}

/// `splits` splits of one sequence of `seqlen_k` keys, as `harness::decode::run` sets
/// `tiles_per_split` (`key_tiles.div_ceil(splits)`) and the kernel cuts them.
pub fn split_plan(fns: &DecodeFns, seqlen_k: u32, splits: u32) -> SplitPlan {
    let key_tiles = seqlen_k.div_ceil(BLOCK_KV);
    let tiles_per_split = key_tiles.div_ceil(splits);
    SplitPlan {
        seqlen_k,
        key_tiles,
        tiles_per_split,
        splits: (0..splits)
            .map(|s| (fns.split_tiles)(s, tiles_per_split, seqlen_k, BLOCK_KV))
            .collect(),
    }
}

impl SplitPlan {
    /// The keys of tile `t`, `first..=last` (the last tile perhaps in part).
    pub fn tile_keys(&self, t: u32) -> (u32, u32) {
        (t * BLOCK_KV, ((t + 1) * BLOCK_KV).min(self.seqlen_k) - 1)
    }

    /// The keys split `s` covers, `None` for an empty split.
    pub fn split_keys(&self, s: usize) -> Option<(u32, u32)> {
        let t = self.splits[s];
        (t.count > 0).then(|| {
            (
                self.tile_keys(t.begin).0,
                self.tile_keys(t.begin + t.count - 1).1,
            )
        })
    }
}

/// Whether `harness::decode::num_splits_heuristic` may take `splits` for `key_tiles`
/// tiles: never a count that gives as many tiles per split as one split fewer.
pub fn heuristic_eligible(key_tiles: u32, splits: u32) -> bool {
    splits == 1 || key_tiles.div_ceil(splits) != key_tiles.div_ceil(splits - 1)
}

// ---------------------------------------------------------------------------------------
// GQA packing

/// `DecodeProblem::kv_bytes`: the bytes of K and V a decode step reads, each sequence's
/// `cache_tokens` keys and values once per K/V head (bf16 / f16).
pub fn kv_bytes(cache_tokens: u64, kv_heads: u64, head_dim: u64) -> u64 {
    2 * cache_tokens * kv_heads * head_dim * ELEM_BYTES
}

/// `DecodeProblem::kv_bytes_unpacked`: reading each K/V head once per query head of its
/// group, `heads / kv_heads` times as much.
pub fn kv_bytes_unpacked(cache_tokens: u64, heads: u64, kv_heads: u64, head_dim: u64) -> u64 {
    kv_bytes(cache_tokens, kv_heads, head_dim) * (heads / kv_heads)
}

/// The [`ROWS`] rows of the first row tile of K/V head `kv_head`: each packed row's
/// (token, query head) from `unpack_row`, `None` past the group's `group * seqlen_q`
/// rows (the kernel loads zeros there and stores nothing).
pub fn packed_tile(
    fns: &DecodeFns,
    group: u32,
    seqlen_q: u32,
    kv_head: u32,
) -> Vec<Option<PackedRow>> {
    (0..ROWS)
        .map(|r| (r < group * seqlen_q).then(|| (fns.unpack_row)(group, kv_head, r)))
        .collect()
}

// ---------------------------------------------------------------------------------------
// The paged cache

/// A small paged cache: sequences of `seqlens` keys in a pool of pages of `page_size`
/// rows, handed out in a shuffled order as the harness's allocator does
/// (`harness::decode::cache`): each sequence's pages in turn, the rest spare, and table
/// entries past a sequence's pages pointing at the first spare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagedCache {
    pub seqlens: Vec<u32>,
    pub page_size: u32,
    pub pages_per_seq: u32,
    /// `[seqlens.len(), pages_per_seq]`, row-major.
    pub table: Vec<i32>,
    pub pool_pages: u32,
    pub spares: Vec<u32>,
}

impl PagedCache {
    /// `order` is a permutation of the pool's pages, `harness::decode::cache::pool_pages`
    /// of them (every sequence's pages and an eighth more, at least two).
    pub fn new(seqlens: &[u32], page_size: u32, order: &[u32]) -> PagedCache {
        let pages_of: Vec<u32> = seqlens.iter().map(|n| n.div_ceil(page_size)).collect();
        let used: u32 = pages_of.iter().sum();
        let pool_pages = used + (used / 8).max(2);
        let mut sorted = order.to_vec();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..pool_pages).collect::<Vec<_>>(),
            "order must be a permutation of the pool's {pool_pages} pages"
        );
        let pages_per_seq = pages_of.iter().copied().max().unwrap_or(0);
        let (owned, spares) = order.split_at(used as usize);
        let mut next = owned.iter();
        let mut table = Vec::new();
        for &n in &pages_of {
            for c in 0..pages_per_seq {
                let page = if c < n {
                    *next.next().unwrap()
                } else {
                    spares[0]
                };
                table.push(page as i32);
            }
        }
        PagedCache {
            seqlens: seqlens.to_vec(),
            page_size,
            pages_per_seq,
            table,
            pool_pages,
            spares: spares.to_vec(),
        }
    }

    /// The book's example: lengths 40, 17 and 70 in pages of 16, a pool of 12.
    pub fn book() -> PagedCache {
        PagedCache::new(&[40, 17, 70], 16, &[7, 2, 10, 4, 0, 9, 5, 11, 1, 8, 3, 6])
    }

    pub fn kv_cache(&self) -> KvCache<'_> {
        KvCache::Paged {
            table: &self.table,
            pages_per_seq: self.pages_per_seq,
            page_size: self.page_size,
        }
    }

    pub fn pages_of(&self, b: usize) -> u32 {
        self.seqlens[b].div_ceil(self.page_size)
    }

    /// Every pool row's (sequence, key), placed by `cache_row`; `None` where no key lives.
    pub fn rows(&self, fns: &DecodeFns) -> Vec<Option<(u32, u32)>> {
        let mut rows = vec![None; (self.pool_pages * self.page_size) as usize];
        for (b, &n) in self.seqlens.iter().enumerate() {
            for j in 0..n {
                let row = (fns.cache_row)(&self.kv_cache(), b as u32, j)
                    .expect("the table covers every key");
                assert!(rows[row as usize].is_none(), "two keys in row {row}");
                rows[row as usize] = Some((b as u32, j));
            }
        }
        rows
    }
}
