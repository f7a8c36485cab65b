//! Decode: a few new query rows per sequence against a long K/V cache, the shape a served
//! model spends most of its time in. The prefill stages' [`Problem`] has
//! one key length and one contiguous cache; a decode batch has a length per sequence, and
//! its cache may be a pool of pages reached through a block table ([`KvLayout`]).
//!
//! This module holds the decode problem and its validation, the split heuristic, the
//! parameters the decode kernels take ([`DecodeParams`], mirrored in
//! `kernel-headers/include/flashlab/decode.cuh`) and what a decode launch is given
//! ([`DecodeLaunch`]); the trait a decode stage implements,
//! [`DecodeStage`](crate::DecodeStage), is [`crate::stage`]'s, beside the prefill one.
//! [`cache`] builds the cache on the host, [`run`] is the protocol every decode run goes
//! through (poison, launch, check against the oracle, time with a cold L2).
//! Book: "Stage 14: flash decode".

pub mod cache;
pub mod run;
pub mod testing;

use crate::{AttnParams, DType, Error, Problem, Result};
use reference::Shape;
use serde::Serialize;
use std::fmt;

/// Query rows per sequence: 1 for plain decoding, up to 16 for speculative decoding.
pub const MAX_SEQLEN_Q: usize = 16;
/// The most splits of one sequence's keys (FlashAttention's limit too).
pub const MAX_SPLITS: usize = 128;
/// The smallest page a paged cache may have; pages are powers of two, so the kernel finds
/// a key's page with a shift.
pub const MIN_PAGE_SIZE: usize = 16;

/// How the K/V cache is laid out in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum KvLayout {
    /// `[batch, capacity, kv_heads, head_dim]`: sequence b's keys are its first
    /// `seqlens_k[b]` rows, `capacity` being the longest length.
    Contiguous,
    /// A pool `[pages, page_size, kv_heads, head_dim]` and a block table
    /// `[batch, pages_per_seq]` of i32 page numbers: key j of sequence b is row
    /// `j % page_size` of page `table[b][j / page_size]`, as vLLM and FlashInfer keep it.
    Paged { page_size: usize },
}

impl KvLayout {
    pub fn page_size(self) -> Option<usize> {
        match self {
            KvLayout::Contiguous => None,
            KvLayout::Paged { page_size } => Some(page_size),
        }
    }
}

impl fmt::Display for KvLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KvLayout::Contiguous => f.write_str("contiguous"),
            KvLayout::Paged { page_size } => write!(f, "paged {page_size}"),
        }
    }
}

/// One decode step of a batch: `seqlen_q` new query rows per sequence (Q and O
/// `[batch, seqlen_q, heads, head_dim]`, LSE `[batch, heads, seqlen_q]`, as in
/// [`Problem`]) against each sequence's cache of `seqlens_k[b]` keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecodeProblem {
    pub batch: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub seqlen_q: usize,
    /// One cache length per sequence.
    pub seqlens_k: Vec<usize>,
    pub head_dim: usize,
    /// Bottom-right aligned per sequence: query i of sequence b sees key j when
    /// `j <= i + seqlens_k[b] - seqlen_q` (the new tokens see each other causally).
    pub causal: bool,
    pub dtype: DType,
    pub scale: Option<f32>,
    pub layout: KvLayout,
    /// How many blocks split each sequence's keys; `None` lets the heuristic choose.
    pub splits: Option<usize>,
}

impl DecodeProblem {
    /// Every sequence with the same cache length, contiguous, bf16, the heuristic's splits.
    pub fn uniform(
        batch: usize,
        heads: usize,
        kv_heads: usize,
        seqlen_q: usize,
        seqlen_k: usize,
        head_dim: usize,
    ) -> DecodeProblem {
        DecodeProblem {
            batch,
            heads,
            kv_heads,
            seqlen_q,
            seqlens_k: vec![seqlen_k; batch],
            head_dim,
            causal: false,
            dtype: DType::Bf16,
            scale: None,
            layout: KvLayout::Contiguous,
            splits: None,
        }
    }

    /// Query heads per K/V head.
    pub fn group(&self) -> usize {
        self.heads / self.kv_heads
    }

    /// Rows of one K/V head's packed tile: every query head of its group, every new token
    /// (GQA packing: the group's heads read the K/V head once, together).
    pub fn packed_rows(&self) -> usize {
        self.group() * self.seqlen_q
    }

    /// The longest cache: the contiguous layout's rows per sequence.
    pub fn capacity(&self) -> usize {
        self.seqlens_k.iter().copied().max().unwrap_or(0)
    }

    pub fn total_cache_tokens(&self) -> usize {
        self.seqlens_k.iter().sum()
    }

    pub fn softmax_scale(&self) -> f32 {
        self.scale.unwrap_or(1.0 / (self.head_dim as f32).sqrt())
    }

    /// Pages sequence b's keys fill (the last one perhaps in part).
    pub fn pages_of(&self, b: usize) -> usize {
        self.layout
            .page_size()
            .map_or(1, |ps| self.seqlens_k[b].div_ceil(ps))
    }

    /// Pages a paged cache's pool holds: every sequence's pages plus spares no sequence
    /// owns (an eighth more, at least two), so the pool is not simply filled in order
    /// ([`cache`] builds it).
    pub fn pool_pages(&self) -> usize {
        let used: usize = (0..self.batch.min(self.seqlens_k.len()))
            .map(|b| self.pages_of(b))
            .sum();
        used + (used / 8).max(2)
    }

    /// Columns of the block table: the longest sequence's pages.
    pub fn pages_per_seq(&self) -> usize {
        (0..self.batch).map(|b| self.pages_of(b)).max().unwrap_or(0)
    }

    // ANCHOR: kv_bytes
    /// Bytes of K and V the step must read: each sequence's keys and values, once per K/V
    /// head. With GQA packing that is what a kernel reads; without it, each query head of a
    /// group would read its K/V head again ([`DecodeProblem::kv_bytes_unpacked`]).
    pub fn kv_bytes(&self) -> f64 {
        2.0 * (self.total_cache_tokens() * self.kv_heads * self.head_dim * 2) as f64
    }

    /// What a kernel reading K/V once per query head would move: `group` times as much.
    pub fn kv_bytes_unpacked(&self) -> f64 {
        self.kv_bytes() * self.group() as f64
    }
    // ANCHOR_END: kv_bytes

    /// Sequence b as a prefill-shaped problem of batch 1, for the oracle and its check.
    pub fn sequence_problem(&self, b: usize) -> Problem {
        Problem {
            shape: Shape {
                batch: 1,
                heads: self.heads,
                kv_heads: self.kv_heads,
                seqlen_q: self.seqlen_q,
                seqlen_k: self.seqlens_k[b],
                head_dim: self.head_dim,
            },
            causal: self.causal,
            dtype: self.dtype,
            scale: self.scale,
        }
    }

    /// Elements of Q (and O).
    pub fn q_len(&self) -> usize {
        self.batch * self.seqlen_q * self.heads * self.head_dim
    }

    pub fn lse_len(&self) -> usize {
        self.batch * self.heads * self.seqlen_q
    }

    /// Checks what any decode kernel needs; a stage checks its head dims and dtypes too
    /// ([`run::DecodeRun::new`]), and the split count is checked once chosen
    /// ([`check_splits`]).
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidProblem(m));
        for (name, value) in [
            ("batch", self.batch),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("seqlen_q", self.seqlen_q),
            ("head_dim", self.head_dim),
        ] {
            if value == 0 {
                return bad(format!("{name} is 0; every size must be at least 1"));
            }
        }
        if self.seqlen_q > MAX_SEQLEN_Q {
            return bad(format!(
                "a decode step has 1 to {MAX_SEQLEN_Q} query rows per sequence (plain or speculative decoding), not {}; longer queries are prefill: run a prefill stage",
                self.seqlen_q
            ));
        }
        if self.heads % self.kv_heads != 0 {
            return bad(format!(
                "heads ({}) must be a multiple of kv_heads ({}): each group of heads/kv_heads query heads shares one K/V head (GQA)",
                self.heads, self.kv_heads
            ));
        }
        if self.seqlens_k.len() != self.batch {
            return bad(format!(
                "{} cache lengths for a batch of {}: give one length per sequence, or one for all",
                self.seqlens_k.len(),
                self.batch
            ));
        }
        if let Some(b) = self.seqlens_k.iter().position(|&n| n == 0) {
            return bad(format!(
                "sequence {b}'s cache length is 0; every sequence needs at least one key"
            ));
        }
        if let KvLayout::Paged { page_size } = self.layout {
            if page_size < MIN_PAGE_SIZE || !page_size.is_power_of_two() {
                return bad(format!(
                    "page size {page_size}: pages hold a power of two of at least {MIN_PAGE_SIZE} tokens (16, 32, 64, ..., 256 as serving engines use)"
                ));
            }
        }
        if let Some(splits) = self.splits {
            if !(1..=MAX_SPLITS).contains(&splits) {
                return bad(format!(
                    "{splits} splits: a sequence's keys split into 1 to {MAX_SPLITS} chunks"
                ));
            }
        }
        if self.batch.saturating_mul(self.kv_heads) > 65_535 {
            return bad(format!(
                "batch x kv_heads is {}; the decode kernel puts one (sequence, K/V head) pair per grid column, and a grid has at most 65535",
                self.batch.saturating_mul(self.kv_heads)
            ));
        }
        let scale = self.softmax_scale();
        if !scale.is_finite() || scale <= 0.0 {
            return bad(format!("softmax scale {scale} must be finite and positive"));
        }
        let cache_rows = match self.layout {
            KvLayout::Contiguous => self.batch.checked_mul(self.capacity()),
            KvLayout::Paged { page_size } => self.pool_pages().checked_mul(page_size),
        };
        let row = self.kv_heads.checked_mul(self.head_dim);
        for (name, n) in [
            (
                "Q/O",
                Some(self.batch)
                    .and_then(|b| b.checked_mul(self.seqlen_q))
                    .and_then(|n| n.checked_mul(self.heads))
                    .and_then(|n| n.checked_mul(self.head_dim)),
            ),
            (
                "the K/V cache",
                cache_rows.zip(row).and_then(|(r, w)| r.checked_mul(w)),
            ),
        ] {
            if n.is_none_or(|n| n > crate::problem::MAX_ELEMENTS) {
                return bad(format!(
                    "{name} would hold more than 2^31 - 1 elements; the kernels index a tensor with 32-bit integers, so keep it below {}",
                    crate::problem::MAX_ELEMENTS
                ));
            }
        }
        Ok(())
    }
}

impl fmt::Display for DecodeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "batch {} heads {} (kv {}) q {}",
            self.batch, self.heads, self.kv_heads, self.seqlen_q
        )?;
        let (min, max) = (
            self.seqlens_k.iter().min().copied().unwrap_or(0),
            self.capacity(),
        );
        if min == max {
            write!(f, " cache {max}")?;
        } else {
            write!(f, " cache {min}..{max}")?;
        }
        write!(
            f,
            " dim {} {}{} {}",
            self.head_dim,
            self.dtype,
            if self.causal { " causal" } else { "" },
            self.layout
        )
    }
}

/// A decode stage's tile shape: what the grid, the block and the split count follow from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DecodeTiles {
    /// Packed rows per block (query heads of a group times new tokens): one m16 tile.
    pub rows: u32,
    /// Keys per K/V tile.
    pub block_kv: u32,
    /// Warps per block up to head dim 128: one per 16 keys of a tile.
    pub warps: u32,
    /// Above head dim 128, warps per 16 keys, each with a share of O's columns.
    pub wide_col_split: u32,
    /// K/V tiles resident at once (the cp.async ring's depth).
    pub kv_slots: u32,
}

impl DecodeTiles {
    /// Row tiles per (sequence, K/V head): groups wider than one tile take several blocks.
    pub fn row_tiles(&self, p: &DecodeProblem) -> usize {
        p.packed_rows().div_ceil(self.rows as usize)
    }

    /// Blocks of one split: every (sequence, K/V head, row tile).
    pub fn blocks_per_split(&self, p: &DecodeProblem) -> usize {
        p.batch * p.kv_heads * self.row_tiles(p)
    }

    /// Key tiles of the longest sequence: what the splits divide.
    pub fn key_tiles(&self, p: &DecodeProblem) -> usize {
        p.capacity().div_ceil(self.block_kv as usize)
    }

    /// Threads of a split block at `head_dim`.
    pub fn threads(&self, head_dim: usize) -> u32 {
        let col_split = if head_dim > 128 {
            self.wide_col_split
        } else {
            1
        };
        32 * self.warps * col_split
    }

    /// The ring of K and V tiles, and the Q tile.
    pub fn smem_bytes(&self, head_dim: usize) -> u32 {
        (2 * self.kv_slots * self.block_kv + self.rows) * head_dim as u32 * 2
    }

    /// One key tile's K and V, 16-bit: what a block reads per step of its loop.
    pub fn kv_tile_bytes(&self, head_dim: usize) -> usize {
        2 * self.block_kv as usize * head_dim * 2
    }
}

// ANCHOR: heuristic
/// FlashAttention's split heuristic (`num_splits_heuristic` in FlashAttention-2's
/// `flash_api.cpp` and FlashAttention-3's `heuristics.h`): with `blocks` blocks per split
/// on `sms` SMs, a split count s runs `blocks * s / sms` waves, and its wave efficiency
/// is that number over its ceiling (the last wave's idle SMs are the loss). Take the
/// smallest s within 85% of the best efficiency: more splits than that only add partial
/// results to combine ([`SplitRule::FlashAttention`]; stage 15, whose merge costs little,
/// takes the most splits one wave holds: [`SplitRule::OneWave`]). Enough blocks to nearly fill the GPU
/// unsplit (80% of the SMs), or too few key tiles to share out (4 or fewer), mean one
/// split; a split count that gives the same tiles per split as one fewer is never taken.
pub fn num_splits_heuristic(
    blocks: usize,
    sms: usize,
    key_tiles: usize,
    max_splits: usize,
    rule: SplitRule,
) -> usize {
    if blocks as f64 >= 0.8 * sms as f64 || key_tiles <= 4 {
        return 1;
    }
    let max_splits = max_splits.min(sms).min(key_tiles);
    let eligible = |s: usize| s == 1 || key_tiles.div_ceil(s) != key_tiles.div_ceil(s - 1);
    let efficiency = |s: usize| {
        let waves = (blocks * s) as f64 / sms as f64;
        waves / waves.ceil()
    };
    match rule {
        SplitRule::FlashAttention => {
            let best = (1..=max_splits)
                .filter(|&s| eligible(s))
                .map(efficiency)
                .fold(0.0, f64::max);
            (1..=max_splits)
                .find(|&s| eligible(s) && efficiency(s) >= 0.85 * best)
                .unwrap_or(1)
        }
        SplitRule::OneWave => (1..=max_splits)
            .filter(|&s| eligible(s) && blocks * s <= sms && key_tiles.div_ceil(s) >= 2)
            .max()
            .unwrap_or(1),
    }
}
// ANCHOR_END: heuristic

// ANCHOR: split_rule
/// How the heuristic picks among the split counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitRule {
    /// FlashAttention's: the fewest splits within 85% of the best wave efficiency, as each
    /// split adds a partial result for a combine kernel to read back and merge (stage 14).
    FlashAttention,
    /// The most splits whose blocks all run in one wave (blocks x splits <= slots), each
    /// of at least two key tiles: where the merge is fused and costs little, every slot
    /// is worth filling, but a second wave would start its blocks' pipelines cold after
    /// the first, and a split of one tile has no next tile to load while it computes
    /// (stage 15). Its wave is counted in bytes of K/V tile per SM, not in the blocks an
    /// SM can hold ([`WAVE_TILE_BYTES_PER_SM`]): more blocks than stream the SM's share of
    /// the bandwidth only add partials to merge.
    OneWave,
}
// ANCHOR_END: split_rule

/// In a decode report's JSON, by name (written by hand, as the book shows the enum).
impl Serialize for SplitRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            SplitRule::FlashAttention => "flash_attention",
            SplitRule::OneWave => "one_wave",
        })
    }
}

impl fmt::Display for SplitRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitRule::FlashAttention => f.write_str(
                "FlashAttention's rule: the fewest within 85% of the best wave efficiency",
            ),
            SplitRule::OneWave => write!(
                f,
                "one wave of {} KiB of K/V tile per SM: the most splits it holds, two key tiles each at least",
                WAVE_TILE_BYTES_PER_SM / 1024
            ),
        }
    }
}

// ANCHOR: wave_bytes
/// The K/V tile bytes one wave of [`SplitRule::OneWave`] gives each SM: one block at
/// D = 128 (32 KiB of K and V tile), two at D = 64, and a D = 256 block on every other
/// SM. In the H100's cold sweeps (bench/experiments/2026-11-26-decode-split-bytes) those
/// were the best grids at each head dim, or within 2.4% of them, where counting blocks
/// took two per SM at D = 128, four at D = 64 and one at D = 256.
pub const WAVE_TILE_BYTES_PER_SM: usize = 32 * 1024;
// ANCHOR_END: wave_bytes

impl SplitRule {
    /// The block slots of one wave, for `sms` SMs that each hold `blocks_per_sm` blocks of
    /// `kv_tile_bytes` tiles: FlashAttention counts the blocks an SM holds; one wave
    /// counts [`WAVE_TILE_BYTES_PER_SM`] of tile per SM, never more blocks than fit.
    pub fn slots(self, sms: usize, blocks_per_sm: usize, kv_tile_bytes: usize) -> usize {
        let resident = sms * blocks_per_sm;
        match self {
            SplitRule::FlashAttention => resident,
            SplitRule::OneWave => {
                (sms * WAVE_TILE_BYTES_PER_SM / kv_tile_bytes).clamp(1, resident.max(1))
            }
        }
    }
}

/// The wave efficiency of `splits` (for the bench and the book's worked example).
pub fn wave_efficiency(blocks: usize, sms: usize, splits: usize) -> f64 {
    let waves = (blocks * splits) as f64 / sms as f64;
    waves / waves.ceil()
}

/// The split count of a run: the problem's own, or the heuristic's for `slots` block
/// slots ([`SplitRule::slots`]: SMs times the blocks one SM holds, as FlashAttention-2
/// counts them, or in tile bytes).
pub fn choose_splits(
    p: &DecodeProblem,
    tiles: &DecodeTiles,
    slots: usize,
    rule: SplitRule,
) -> usize {
    p.splits.unwrap_or_else(|| {
        num_splits_heuristic(
            tiles.blocks_per_split(p),
            slots,
            tiles.key_tiles(p),
            MAX_SPLITS,
            rule,
        )
    })
}

/// The partial results of `splits` splits must fit 32-bit indexing too.
pub fn check_splits(p: &DecodeProblem, splits: usize) -> Result<()> {
    if splits > 1 && splits.saturating_mul(p.q_len()) > crate::problem::MAX_ELEMENTS {
        return Err(Error::InvalidProblem(format!(
            "{splits} splits of {} query elements need a partial-result workspace of more than 2^31 - 1 elements; use fewer splits (--splits) or a smaller batch",
            p.q_len()
        )));
    }
    Ok(())
}

/// `struct DecodeParams` of `kernel-headers/include/flashlab/decode.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DecodeParams {
    /// Q, K, V (the cache or the page pool), O and LSE as every stage has them; `seqlen_k`
    /// is the longest sequence's length, the bound of every `seqlens_k[b]`.
    pub attn: AttnParams,
    /// `[batch]` i32 cache lengths.
    pub seqlens_k: u64,
    /// `[batch, pages_per_seq]` i32 page numbers; 0 for a contiguous cache.
    pub block_table: u64,
    /// `[splits, batch, seqlen_q, heads, head_dim]` fp32: each split's normalized O.
    pub o_partial: u64,
    /// `[splits, batch, heads, seqlen_q]` fp32: each split's LSE (natural log).
    pub lse_partial: u64,
    pub page_size: i32,
    /// log2(page_size): a key's page is `j >> page_shift`.
    pub page_shift: i32,
    pub pages_per_seq: i32,
    pub num_splits: i32,
    /// Key tiles each split covers (the last splits of a short sequence cover none).
    pub tiles_per_split: i32,
    /// Query heads per K/V head.
    pub group: i32,
    /// `[batch * kv_heads, row tiles]` i32: how many splits of each row tile are done,
    /// for the stages that merge in the last split's block (stage 15 on). Zero before a
    /// launch, and zero again after it (the last split resets its tile's count).
    pub split_counters: u64,
    /// Rows per sequence of a contiguous cache (where key j of sequence b is row
    /// `b * cache_capacity + j`); 0 for a paged cache, whose rows the page table gives.
    pub cache_capacity: i32,
}

// SAFETY: plain old data with the C layout `decode.cuh` declares.
unsafe impl cudarc::driver::DeviceRepr for DecodeParams {}

/// The device buffers and sizes of one decode launch.
pub struct DecodeLaunch<'a> {
    pub problem: &'a DecodeProblem,
    pub params: DecodeParams,
    pub splits: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem() -> DecodeProblem {
        DecodeProblem::uniform(1, 32, 8, 1, 8192, 128)
    }

    /// Stage 14's and 15's tile shape.
    fn tiles() -> DecodeTiles {
        DecodeTiles {
            rows: 16,
            block_kv: 64,
            warps: 4,
            wide_col_split: 2,
            kv_slots: 3,
        }
    }

    #[test]
    fn gqa_packs_the_group_into_one_tile() {
        let p = problem();
        assert_eq!(p.group(), 4);
        assert_eq!(p.packed_rows(), 4);
        let tiles = tiles();
        assert_eq!(tiles.row_tiles(&p), 1);
        assert_eq!(
            (tiles.threads(64), tiles.threads(128), tiles.threads(256)),
            (128, 128, 256)
        );
        assert_eq!(tiles.blocks_per_split(&p), 8);
        let spec = DecodeProblem { seqlen_q: 16, ..p };
        assert_eq!(tiles.row_tiles(&spec), 4);
    }

    #[test]
    fn bytes_read_count_each_kv_head_once() {
        let p = problem();
        // 8192 keys x 8 K/V heads x 128 dims x 2 bytes, for K and for V: 32 MiB.
        assert_eq!(p.kv_bytes(), 32.0 * 1024.0 * 1024.0);
        assert_eq!(p.kv_bytes_unpacked(), 4.0 * p.kv_bytes());
    }

    /// The book's worked example: an H100's 132 SMs, batch 1 and 8 K/V heads at 8k keys.
    #[test]
    fn heuristic_on_the_h100_example() {
        const FA: SplitRule = SplitRule::FlashAttention;
        // 8 blocks per split, 128 key tiles: the best eligible count is 16 (128 blocks on
        // 132 SMs, 0.97); 15 (120 blocks, 0.91) is the smallest within 85% of it, as 13
        // gives 0.79 and 14 the same 10 tiles per split as 13.
        assert_eq!(num_splits_heuristic(8, 132, 128, MAX_SPLITS, FA), 15);
        assert!((wave_efficiency(8, 132, 15) - 120.0 / 132.0).abs() < 1e-12);
        assert!(wave_efficiency(8, 132, 13) < 0.85 * wave_efficiency(8, 132, 16));
        // Stage 14 holds two blocks per SM: 264 slots. 32 splits fill 256 of them (0.97);
        // 26 would give 0.79, and 27 to 31 the same 5 tiles per split as 26.
        assert_eq!(num_splits_heuristic(8, 264, 128, MAX_SPLITS, FA), 32);
        assert_eq!(num_splits_heuristic(64, 264, 128, MAX_SPLITS, FA), 4);
        // Batch 8: 64 blocks; two splits give 128 of 132 SMs.
        assert_eq!(num_splits_heuristic(64, 132, 128, MAX_SPLITS, FA), 2);
        // Enough blocks already (batch 64 x 8 heads), or too few key tiles: one split.
        assert_eq!(num_splits_heuristic(512, 132, 2048, MAX_SPLITS, FA), 1);
        assert_eq!(num_splits_heuristic(8, 132, 4, MAX_SPLITS, FA), 1);
        // Never more splits than key tiles.
        assert!(num_splits_heuristic(1, 132, 6, MAX_SPLITS, FA) <= 6);
    }

    /// Stage 15's rule on the H100 at D = 128 (32 KiB of tile per SM: 132 slots): every
    /// slot filled in one wave, where FlashAttention's rule settles for fewer.
    #[test]
    fn one_wave_fills_the_slots_once() {
        const FA: SplitRule = SplitRule::FlashAttention;
        let one = SplitRule::OneWave;
        // Batch 1 at 32k keys: 256 tiles of 128. 16 splits put 128 blocks on 132 SMs;
        // FlashAttention's rule takes 14 (112 blocks, 0.85 of a wave).
        assert_eq!(num_splits_heuristic(8, 132, 256, MAX_SPLITS, one), 16);
        assert_eq!(num_splits_heuristic(8, 132, 256, MAX_SPLITS, FA), 14);
        // At 128k (1024 tiles) the same: 49 splits would be 0.99 of three waves.
        assert_eq!(num_splits_heuristic(8, 132, 1024, MAX_SPLITS, one), 16);
        // Where both fill the wave they agree: batch 1 at 8k, batch 8.
        assert_eq!(num_splits_heuristic(8, 132, 64, MAX_SPLITS, one), 16);
        assert_eq!(num_splits_heuristic(64, 132, 64, MAX_SPLITS, one), 2);
        // `flashlab stage` names the rule beside its choice.
        assert!(
            one.to_string()
                .starts_with("one wave of 32 KiB of K/V tile per SM")
        );
        assert!(FA.to_string().contains("85%"));
        // Stage 14's 264 slots: 33 would give 4 tiles a split as 32 does.
        assert_eq!(num_splits_heuristic(8, 264, 128, MAX_SPLITS, one), 32);
        // At 2k keys (32 tiles of 64), 32 splits would fit the wave with one tile each:
        // 16, of two tiles, is the most that keeps a load in flight behind each tile.
        assert_eq!(num_splits_heuristic(8, 264, 32, MAX_SPLITS, one), 16);
        // Always one wave, and no eligible count above it fits.
        for blocks in [1, 8, 24, 64, 100] {
            for tiles in [5, 16, 64, 256, 1024] {
                let s = num_splits_heuristic(blocks, 132, tiles, MAX_SPLITS, one);
                assert!(
                    blocks * s <= 132 || s == 1,
                    "{blocks} blocks, {tiles} tiles: {s}"
                );
                assert!(
                    s == 1 || tiles.div_ceil(s) >= 2,
                    "{blocks} blocks, {tiles} tiles: {s}"
                );
            }
        }
    }

    /// One wave counts tile bytes: on the H100's 132 SMs, two D = 64 blocks per
    /// SM, one D = 128 block, a D = 256 block on every other SM; never more blocks than
    /// fit. FlashAttention's rule counts the blocks that fit.
    #[test]
    fn one_wave_counts_tile_bytes() {
        let tiles = tiles();
        assert_eq!(
            [64, 128, 256].map(|d| tiles.kv_tile_bytes(d) / 1024),
            [16, 32, 64]
        );
        let one = |d: usize, fit: usize| SplitRule::OneWave.slots(132, fit, tiles.kv_tile_bytes(d));
        assert_eq!((one(64, 4), one(128, 2), one(256, 1)), (264, 132, 66));
        // Where fewer blocks fit than the bytes ask for, the blocks that fit.
        assert_eq!(one(64, 1), 132);
        let fa = SplitRule::FlashAttention.slots(132, 2, tiles.kv_tile_bytes(128));
        assert_eq!(fa, 264);
        // The sweeps' best counts, from the slots: batch 1 (8 blocks a split) at 8k keys
        // (128 tiles) takes 16 splits at D = 128, 32 at D = 64, 8 at D = 256; batch 8
        // (64 blocks) takes 2, 4 and 1.
        let pick = |blocks, slots| {
            num_splits_heuristic(blocks, slots, 128, MAX_SPLITS, SplitRule::OneWave)
        };
        assert_eq!(
            (
                pick(8, one(128, 2)),
                pick(8, one(64, 4)),
                pick(8, one(256, 1))
            ),
            (16, 32, 8)
        );
        assert_eq!(
            (
                pick(64, one(128, 2)),
                pick(64, one(64, 4)),
                pick(64, one(256, 1))
            ),
            (2, 4, 1)
        );
    }

    #[test]
    fn impossible_problems_are_refused_by_name() {
        let err = |p: DecodeProblem| p.validate().unwrap_err().to_string();
        let mut p = problem();
        p.kv_heads = 5;
        assert!(err(p).contains("multiple of kv_heads"));
        let mut p = problem();
        p.seqlen_q = 17;
        assert!(err(p).contains("1 to 16 query rows"));
        let mut p = problem();
        p.seqlens_k = vec![10, 20];
        assert!(err(p).contains("2 cache lengths for a batch of 1"));
        let mut p = problem();
        p.seqlens_k = vec![0];
        assert!(err(p).contains("cache length is 0"));
        let mut p = problem();
        p.layout = KvLayout::Paged { page_size: 48 };
        assert!(err(p).contains("power of two"));
        let mut p = problem();
        p.splits = Some(0);
        assert!(err(p).contains("1 to 128"));
        // 64 sequences of 128k keys, 8 K/V heads of 128: 2^33 elements.
        let p = DecodeProblem::uniform(64, 32, 8, 1, 131072, 128);
        assert!(err(p).contains("32-bit"));
        problem().validate().unwrap();
    }

    #[test]
    fn workspace_of_many_splits_must_fit_32_bits() {
        let p = DecodeProblem::uniform(64, 128, 8, 16, 1024, 256);
        p.validate().unwrap();
        assert!(check_splits(&p, 1).is_ok());
        assert!(
            check_splits(&p, 128)
                .unwrap_err()
                .to_string()
                .contains("--splits")
        );
    }

    #[test]
    fn params_layout_matches_the_c_struct() {
        use std::mem::offset_of;
        for (field, got, want) in [
            ("seqlens_k", offset_of!(DecodeParams, seqlens_k), 104),
            ("block_table", offset_of!(DecodeParams, block_table), 112),
            ("o_partial", offset_of!(DecodeParams, o_partial), 120),
            ("lse_partial", offset_of!(DecodeParams, lse_partial), 128),
            ("page_size", offset_of!(DecodeParams, page_size), 136),
            ("page_shift", offset_of!(DecodeParams, page_shift), 140),
            (
                "pages_per_seq",
                offset_of!(DecodeParams, pages_per_seq),
                144,
            ),
            ("num_splits", offset_of!(DecodeParams, num_splits), 148),
            (
                "tiles_per_split",
                offset_of!(DecodeParams, tiles_per_split),
                152,
            ),
            ("group", offset_of!(DecodeParams, group), 156),
            (
                "split_counters",
                offset_of!(DecodeParams, split_counters),
                160,
            ),
            (
                "cache_capacity",
                offset_of!(DecodeParams, cache_capacity),
                168,
            ),
        ] {
            assert_eq!(got, want, "offset of DecodeParams::{field}");
        }
        assert_eq!(std::mem::size_of::<DecodeParams>(), 176);
    }
}
