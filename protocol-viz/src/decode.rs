//! Stage 14 (flash decode): which key tiles each split covers, which (token, query head)
//! each packed row of a GQA tile is, and where a key lives in a paged cache, with the
//! book's three figures of them.
//!
//! The figures take the kernels' own functions (`kernel-headers/include/flashlab/decode_index.cuh`
//! through [`crate::kernel_fns`]); [`DecodeFns`] also holds protocol-viz's models of them,
//! which `tests/decode.rs` holds equal to the kernels' over a grid of inputs.
//! The tile shape is the stage's own `src/tiles.rs`. Book: "Stage 14: flash decode".

use svg::node::element::{Group, Polygon, Title};

use crate::decode_index::{KvCache, PackedRow, SplitTiles};
use crate::kernel_fns;
use layout_viz::svg_kit::{
    CHAR_W_11, CHAR_W_12, INK, MARGIN, MARK, MAX_WIDTH, MUTED, document, fmt, heading, line, rect,
    swatch, text, wrap,
};

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

/// The decode kernels' index functions the figures are computed from: the kernels' own
/// (`KERNELS`, the C++ host build) or protocol-viz's models of them (`MODELS`), held equal
/// by `tests/decode.rs`, as layout-viz's `bank::IndexFns` is for the bank maps.
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
    pub const KERNELS: DecodeFns = DecodeFns {
        split_tiles: kernel_fns::split_tiles,
        cache_row: kernel_fns::cache_row,
        unpack_row: kernel_fns::unpack_row,
    };

    /// protocol-viz's models of the same functions.
    pub const MODELS: DecodeFns = DecodeFns {
        split_tiles: model_split_tiles,
        cache_row: model_cache_row,
        unpack_row: model_unpack_row,
    };

    /// What the figures use: the kernels' own functions.
    pub const DEFAULT: DecodeFns = DecodeFns::KERNELS;
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

const SPLIT_FILLS: [&str; 6] = [
    "#c6dbef", "#c7e9c0", "#fdd0a2", "#dadaeb", "#fcbba1", "#d9d9d9",
];
const EMPTY_FILL: &str = "#f4f4f4";

fn titled(title: String) -> Group {
    Group::new().set("class", "cell").add(Title::new(title))
}

/// The split-combine figure: the keys of one sequence cut into `splits` splits of
/// 64-key tiles, one block each, each writing its partial (O_s, LSE_s), and the combine.
pub fn split_combine_svg(seqlen_k: u32, splits: u32) -> String {
    split_combine_svg_with(&DecodeFns::DEFAULT, seqlen_k, splits)
}

/// [`split_combine_svg`] computed with `fns`.
pub fn split_combine_svg_with(fns: &DecodeFns, seqlen_k: u32, splits: u32) -> String {
    let plan = split_plan(fns, seqlen_k, splits);
    let n = plan.splits.len();
    let inner = MAX_WIDTH - 2.0 * MARGIN;
    let fill = |s: usize| SPLIT_FILLS[s % SPLIT_FILLS.len()];

    let (mut body, mut y) = heading(
        Group::new(),
        format!("Split-KV: one sequence of {seqlen_k} keys in {splits} splits"),
        format!(
            "{} tiles of {BLOCK_KV} keys; tiles_per_split = ceil({} / {splits}) = {}",
            plan.key_tiles, plan.key_tiles, plan.tiles_per_split
        ),
    );

    // The key axis: every tile, coloured by the split that covers it; the last tile's
    // rows past the end hatched off.
    y += 24.0;
    body = body.add(text(MARGIN, y, 12, "the sequence's keys, tile by tile").set("fill", MUTED));
    y += 8.0;
    let slots = f64::from(plan.key_tiles * BLOCK_KV);
    let kx = |k: u32| MARGIN + inner * f64::from(k) / slots;
    let bar_h = 24.0;
    let bar_y = y;
    let owner = |t: u32| {
        plan.splits
            .iter()
            .position(|c| t >= c.begin && t < c.begin + c.count)
    };
    for t in 0..plan.key_tiles {
        let (first, last) = plan.tile_keys(t);
        let s = owner(t).expect("every tile has a split");
        let (x0, x_end, x1) = (kx(first), kx(last + 1), kx((t + 1) * BLOCK_KV));
        let part = last + 1 - first < BLOCK_KV;
        let mut g = titled(format!(
            "tile {t}: keys {first}-{last}{}, split {s} (blockIdx.x = {s})",
            if part {
                format!(
                    " ({} of {BLOCK_KV}; rows {}-{} are zero-filled and masked)",
                    last + 1 - first,
                    last + 1 - first,
                    BLOCK_KV - 1
                )
            } else {
                String::new()
            }
        ))
        .add(rect(x0, bar_y, x_end - x0, bar_h, fill(s)));
        if part {
            g = g.add(
                rect(x_end, bar_y, x1 - x_end, bar_h, "#ffffff")
                    .set("stroke", MUTED)
                    .set("stroke-dasharray", "2 2")
                    .set("stroke-width", 0.6),
            );
        }
        g = g
            .add(
                rect(x0, bar_y, x1 - x0, bar_h, "none")
                    .set("stroke", INK)
                    .set("stroke-width", 0.6),
            )
            .add(
                text((x0 + x_end) / 2.0, bar_y + 16.0, 11, t.to_string())
                    .set("text-anchor", "middle"),
            );
        body = body.add(g);
    }
    // Split boundaries, and the end of the keys, under the bar.
    let mut ticks: Vec<u32> = plan
        .splits
        .iter()
        .filter(|c| c.count > 0)
        .map(|c| c.begin * BLOCK_KV)
        .collect();
    ticks.push(seqlen_k);
    let tick_y = bar_y + bar_h;
    for &k in &ticks {
        body = body
            .add(line(kx(k), bar_y - 4.0, kx(k), tick_y + 5.0, INK, 1.4))
            .add(text(kx(k), tick_y + 17.0, 11, k.to_string()).set("text-anchor", "middle"));
    }

    // One column per split: its block and its tiles.
    let gap = 10.0;
    let col_w = (inner - gap * (n as f64 - 1.0)) / n as f64;
    let col_x = |s: usize| MARGIN + s as f64 * (col_w + gap);
    let top = tick_y + 44.0;
    let tile_h = 32.0;
    let head_h = 36.0;
    let tiles_h = f64::from(plan.tiles_per_split) * (tile_h + 4.0);
    for (s, c) in plan.splits.iter().enumerate() {
        let x = col_x(s);
        // The funnel from the split's keys on the bar to its block.
        if c.count > 0 {
            let (k0, k1) = (c.begin * BLOCK_KV, (c.begin + c.count) * BLOCK_KV);
            body = body.add(
                Polygon::new()
                    .set(
                        "points",
                        format!(
                            "{},{} {},{} {},{} {},{}",
                            fmt(kx(k0)),
                            fmt(tick_y),
                            fmt(kx(k1)),
                            fmt(tick_y),
                            fmt(x + col_w),
                            fmt(top),
                            fmt(x),
                            fmt(top)
                        ),
                    )
                    .set("fill", fill(s))
                    .set("fill-opacity", 0.35),
            );
        }
        let block_title = match plan.split_keys(s) {
            Some((k0, k1)) => format!(
                "split {s}: the block with blockIdx.x = {s} (one per row tile and (sequence, K/V head)) runs tiles {}-{}, keys {k0}-{k1}",
                c.begin,
                c.begin + c.count - 1
            ),
            None => format!(
                "split {s}: the block with blockIdx.x = {s} has no tiles ({} x {} = {} >= {} tiles); it writes an empty partial",
                s, plan.tiles_per_split, c.begin, plan.key_tiles
            ),
        };
        body = body.add(
            titled(block_title)
                .add(
                    rect(
                        x,
                        top,
                        col_w,
                        head_h + tiles_h + 6.0,
                        if c.count > 0 { "#ffffff" } else { EMPTY_FILL },
                    )
                    .set("stroke", INK)
                    .set("stroke-width", 0.8)
                    .set("stroke-dasharray", if c.count > 0 { "none" } else { "4 3" }),
                )
                .add(text(x + 8.0, top + 16.0, 12, format!("split {s}")).set("font-weight", "bold"))
                .add(text(x + 8.0, top + 30.0, 11, format!("block x = {s}")).set("fill", MUTED)),
        );
        let mut ty = top + head_h;
        for t in c.begin..c.begin + c.count {
            let (first, last) = plan.tile_keys(t);
            let part = last + 1 - first < BLOCK_KV;
            body = body.add(
                titled(format!(
                    "tile {t} (tile {} of split {s}): keys {first}-{last}{}",
                    t - c.begin,
                    if part {
                        format!(", {} of {BLOCK_KV} keys", last + 1 - first)
                    } else {
                        String::new()
                    }
                ))
                .add(
                    rect(x + 6.0, ty, col_w - 12.0, tile_h, fill(s))
                        .set("stroke", "#555555")
                        .set("stroke-width", 0.5),
                )
                .add(text(x + 12.0, ty + 13.0, 11, format!("tile {t}")))
                .add(text(
                    x + 12.0,
                    ty + 27.0,
                    11,
                    if part {
                        format!("keys {first}-{last}*")
                    } else {
                        format!("keys {first}-{last}")
                    },
                )),
            );
            ty += tile_h + 4.0;
        }
        if c.count == 0 {
            let mut ly = top + head_h + 14.0;
            for l in wrap(
                &format!(
                    "no tiles: {s} x {} = {} is past tile {}",
                    plan.tiles_per_split,
                    c.begin,
                    plan.key_tiles - 1
                ),
                ((col_w - 16.0) / CHAR_W_11) as usize,
            ) {
                body = body.add(text(x + 8.0, ly, 11, l));
                ly += 15.0;
            }
        }
    }

    // Each block's partial result.
    let out_y = top + head_h + tiles_h + 6.0 + 16.0;
    let out_h = 40.0;
    for (s, c) in plan.splits.iter().enumerate() {
        let x = col_x(s);
        body = body.add(line(
            x + col_w / 2.0,
            out_y - 16.0,
            x + col_w / 2.0,
            out_y,
            INK,
            1.0,
        ));
        let (l1, l2, tip) = match plan.split_keys(s) {
            Some((k0, k1)) => (
                format!("O_{s}, LSE_{s}"),
                format!("keys {k0}-{k1}"),
                format!(
                    "split {s}'s block writes O_{s}, its O normalized over keys {k0}-{k1} alone (o_partial[{s}], fp32), and LSE_{s} = ln of that softmax's sum (lse_partial[{s}])"
                ),
            ),
            None => (
                format!("O_{s} = 0"),
                format!("LSE_{s} = -inf"),
                format!(
                    "split {s} saw no keys: it writes O_{s} = 0 and LSE_{s} = -inf, so the combine gives it weight exp(-inf) = 0"
                ),
            ),
        };
        body = body.add(
            titled(tip)
                .add(
                    rect(
                        x,
                        out_y,
                        col_w,
                        out_h,
                        if c.count > 0 { fill(s) } else { EMPTY_FILL },
                    )
                    .set("stroke", INK)
                    .set("stroke-width", 0.8),
                )
                .add(text(x + col_w / 2.0, out_y + 16.0, 12, l1).set("text-anchor", "middle"))
                .add(
                    text(x + col_w / 2.0, out_y + 32.0, 11, l2)
                        .set("text-anchor", "middle")
                        .set("fill", MUTED),
                ),
        );
    }

    // The combine.
    let comb_y = out_y + out_h + 34.0;
    for s in 0..n {
        let x = col_x(s) + col_w / 2.0;
        body = body.add(line(
            x,
            out_y + out_h,
            MARGIN + inner / 2.0 + (x - MARGIN - inner / 2.0) * 0.4,
            comb_y,
            INK,
            1.0,
        ));
    }
    let empty: Vec<usize> = (0..n).filter(|&s| plan.splits[s].count == 0).collect();
    let comb_lines = [
        "combine kernel, for every packed row:".to_string(),
        "LSE = ln Σ_s exp(LSE_s)".to_string(),
        "O = Σ_s exp(LSE_s − LSE) · O_s".to_string(),
    ];
    let comb_h = 18.0 * comb_lines.len() as f64 + 14.0;
    let mut comb = titled(format!(
        "the combine kernel (one warp per 32 columns of a row) weighs each split's O_s by exp(LSE_s - LSE): its share of the whole softmax sum{}",
        if empty.is_empty() {
            String::new()
        } else {
            "; an empty split's LSE = -inf gives weight 0".to_string()
        }
    ))
    .add(
        rect(MARGIN, comb_y, inner, comb_h, "#ffffff")
            .set("stroke", INK)
            .set("stroke-width", 1.2),
    );
    for (i, l) in comb_lines.iter().enumerate() {
        let t = text(
            MARGIN + inner / 2.0,
            comb_y + 20.0 + 18.0 * i as f64,
            12,
            l.clone(),
        )
        .set("text-anchor", "middle");
        comb = comb.add(if i == 0 {
            t.set("font-weight", "bold")
        } else {
            t
        });
    }
    body = body.add(comb);

    // What the reader should take from the example.
    let mut notes = vec![format!(
        "* tile {} holds keys {}-{}: {} of {BLOCK_KV}. Its other rows are zero-filled by the copy and masked.",
        plan.key_tiles - 1,
        plan.tile_keys(plan.key_tiles - 1).0,
        plan.tile_keys(plan.key_tiles - 1).1,
        plan.tile_keys(plan.key_tiles - 1).1 + 1 - plan.tile_keys(plan.key_tiles - 1).0
    )];
    let short: Vec<usize> = (0..n)
        .filter(|&s| (1..plan.tiles_per_split).contains(&plan.splits[s].count))
        .collect();
    for s in &short {
        notes.push(format!(
            "Split {s} is short: {} tile(s) of {}.",
            plan.splits[*s].count, plan.tiles_per_split
        ));
    }
    if !empty.is_empty() {
        let names: Vec<String> = empty.iter().map(|s| s.to_string()).collect();
        let full = plan.key_tiles.div_ceil(plan.tiles_per_split);
        let mut note = format!(
            "Split {} is empty: {full} splits of {} tiles already cover the {} tiles.",
            names.join(", "),
            plan.tiles_per_split,
            plan.key_tiles
        );
        if !heuristic_eligible(plan.key_tiles, splits) {
            note += &format!(
                " The heuristic never picks {splits} splits for {} tiles (ceil({} / {splits}) = ceil({} / {}) = {}), but --splits {splits} does.",
                plan.key_tiles,
                plan.key_tiles,
                plan.key_tiles,
                splits - 1,
                plan.tiles_per_split
            );
        }
        note += " In a batch, a sequence shorter than the longest gets empty last splits the same way: tiles_per_split comes from the longest.";
        notes.push(note);
    }
    let mut ny = comb_y + comb_h + 12.0;
    for note in notes {
        for l in wrap(&note, (inner / CHAR_W_12) as usize) {
            ny += 17.0;
            body = body.add(text(MARGIN, ny, 12, l));
        }
        ny += 4.0;
    }
    document(
        MAX_WIDTH,
        (ny + MARGIN).ceil(),
        &format!(
            "Stage 14: {seqlen_k} keys in {splits} splits, each block's (O_s, LSE_s), and the combine"
        ),
        body,
    )
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

fn mib(bytes: u64) -> String {
    let m = bytes as f64 / f64::from(1u32 << 20);
    if m.fract() == 0.0 {
        format!("{m} MiB")
    } else {
        format!("{m:.1} MiB")
    }
}

const TOKEN_FILLS: [&str; 4] = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb"];

/// The GQA-packing figure: the m16 tile of K/V head `kv_head` with `heads / kv_heads`
/// query heads per K/V head and `seqlen_q` new tokens, each row's (token, head); beside
/// it the bytes of K and V a step over `seqlen_k` keys of dim `head_dim` reads with and
/// without packing.
pub fn gqa_packing_svg(
    heads: u32,
    kv_heads: u32,
    seqlen_q: u32,
    kv_head: u32,
    seqlen_k: u32,
    head_dim: u32,
) -> String {
    gqa_packing_svg_with(
        &DecodeFns::DEFAULT,
        heads,
        kv_heads,
        seqlen_q,
        kv_head,
        seqlen_k,
        head_dim,
    )
}

/// [`gqa_packing_svg`] computed with `fns`.
pub fn gqa_packing_svg_with(
    fns: &DecodeFns,
    heads: u32,
    kv_heads: u32,
    seqlen_q: u32,
    kv_head: u32,
    seqlen_k: u32,
    head_dim: u32,
) -> String {
    let group = heads / kv_heads;
    let packed = group * seqlen_q;
    let tile = packed_tile(fns, group, seqlen_q, kv_head);
    let inner = MAX_WIDTH - 2.0 * MARGIN;
    let (first_head, last_head) = (kv_head * group, kv_head * group + group - 1);

    let (mut body, y0) = heading(
        Group::new(),
        format!("GQA packing: query heads {first_head}-{last_head} share K/V head {kv_head}"),
        format!(
            "group {group} (heads {heads} / K/V heads {kv_heads}), {seqlen_q} new tokens: {packed} packed rows of one m16 tile"
        ),
    );

    // Left: the tile.
    let left_w = 330.0;
    let mut y = y0 + 28.0;
    body = body.add(
        text(
            MARGIN,
            y,
            12,
            format!("Q tile of the block for K/V head {kv_head}"),
        )
        .set("font-weight", "bold"),
    );
    y += 8.0;
    let row_h = 19.0;
    let idx_w = 52.0;
    for (r, row) in tile.iter().enumerate() {
        let ry = y + r as f64 * row_h;
        let (fill, label, tip) = match row {
            Some(pr) => (
                TOKEN_FILLS[pr.token as usize % TOKEN_FILLS.len()],
                format!("token {} · query head {}", pr.token, pr.head),
                format!(
                    "packed row {r} = unpack_row(group {group}, K/V head {kv_head}, {r}): token {r} / {group} = {}, head {kv_head} x {group} + {r} % {group} = {}",
                    pr.token, pr.head
                ),
            ),
            None => (
                EMPTY_FILL,
                "zero: no query".to_string(),
                format!(
                    "row {r} is past the {packed} packed rows: the copy fills it with zeros and the block stores nothing for it"
                ),
            ),
        };
        let mut g = titled(tip)
            .add(
                rect(MARGIN, ry, idx_w, row_h, "#ffffff")
                    .set("stroke", "#555555")
                    .set("stroke-width", 0.5),
            )
            .add(
                rect(MARGIN + idx_w, ry, left_w - idx_w, row_h, fill)
                    .set("stroke", "#555555")
                    .set("stroke-width", 0.5),
            )
            .add(text(MARGIN + 8.0, ry + 14.0, 11, format!("row {r}")).set("fill", MUTED));
        let t = text(MARGIN + idx_w + 10.0, ry + 14.0, 11, label);
        g = g.add(if row.is_some() {
            t
        } else {
            t.set("fill", MUTED)
        });
        body = body.add(g);
    }
    let tile_bottom = y + f64::from(ROWS) * row_h;

    // Right: which heads share the K/V head, then the bytes.
    let rx = MARGIN + left_w + 24.0;
    let rw = MAX_WIDTH - MARGIN - rx;
    let mut y = y0 + 28.0;
    body = body.add(text(rx, y, 12, "query heads over K/V heads").set("font-weight", "bold"));
    y += 8.0;
    let hw = rw / f64::from(heads);
    for h in 0..heads {
        let mine = h / group == kv_head;
        let fill = if mine {
            "#6baed6"
        } else if (h / group) % 2 == 0 {
            "#e6e6e6"
        } else {
            "#cccccc"
        };
        body = body.add(
            titled(format!(
                "query head {h} reads K/V head {}{}",
                h / group,
                if mine {
                    ": packed into this block's tile"
                } else {
                    ""
                }
            ))
            .add(
                rect(rx + f64::from(h) * hw, y, hw, 16.0, fill)
                    .set("stroke", "#ffffff")
                    .set("stroke-width", 0.5),
            ),
        );
    }
    let kw = rw / f64::from(kv_heads);
    for k in 0..kv_heads {
        let fill = if k == kv_head {
            "#6baed6"
        } else if k % 2 == 0 {
            "#e6e6e6"
        } else {
            "#cccccc"
        };
        body = body.add(
            titled(format!(
                "K/V head {k}: read by query heads {}-{}, one block per row tile",
                k * group,
                k * group + group - 1
            ))
            .add(
                rect(rx + f64::from(k) * kw, y + 18.0, kw, 16.0, fill)
                    .set("stroke", "#ffffff")
                    .set("stroke-width", 0.5),
            )
            .add(
                text(rx + (f64::from(k) + 0.5) * kw, y + 30.0, 10, k.to_string())
                    .set("text-anchor", "middle"),
            ),
        );
    }
    y += 50.0;
    for l in wrap(
        &format!(
            "{heads} query heads (top), {kv_heads} K/V heads (below); heads {first_head}-{last_head} read K/V head {kv_head}, so its block reads it once for all {group}"
        ),
        (rw / CHAR_W_11) as usize,
    ) {
        body = body.add(text(rx, y, 11, l));
        y += 15.0;
    }

    // The bytes, from the formula of DecodeProblem::kv_bytes.
    let tokens = u64::from(seqlen_k);
    let packed_bytes = kv_bytes(tokens, kv_heads.into(), head_dim.into());
    let unpacked_bytes = kv_bytes_unpacked(tokens, heads.into(), kv_heads.into(), head_dim.into());
    y += 16.0;
    body = body.add(text(rx, y, 12, "K and V bytes one step reads").set("font-weight", "bold"));
    for l in wrap(
        &format!(
            "batch 1, {heads} query heads, {kv_heads} K/V heads, D {head_dim}, {seqlen_k} keys, bf16"
        ),
        (rw / CHAR_W_11) as usize,
    ) {
        y += 16.0;
        body = body.add(text(rx, y, 11, l).set("fill", MUTED));
    }
    let bar_max = rw - 76.0;
    for (label, bytes, formula, fill) in [
        (
            "packed: each K/V head once".to_string(),
            packed_bytes,
            format!("2 (K, V) · {seqlen_k} · {kv_heads} · {head_dim} · 2 B"),
            "#6baed6",
        ),
        (
            format!("unpacked: once per query head, x {group}"),
            unpacked_bytes,
            format!("{} x {group}", mib(packed_bytes)),
            "#fc9272",
        ),
    ] {
        y += 24.0;
        body = body.add(text(rx, y, 11, label));
        let w = bar_max * bytes as f64 / unpacked_bytes as f64;
        y += 6.0;
        body = body.add(
            titled(format!("{formula} = {bytes} bytes = {}", mib(bytes)))
                .add(
                    rect(rx, y, w, 18.0, fill)
                        .set("stroke", INK)
                        .set("stroke-width", 0.5),
                )
                .add(text(rx + w + 6.0, y + 14.0, 12, mib(bytes)).set("font-weight", "bold")),
        );
        y += 18.0 + 15.0;
        body = body.add(text(rx, y, 11, formula).set("fill", MUTED));
    }

    let mut ny = tile_bottom.max(y) + 10.0;
    let tiles_for_16 = (group * 16).div_ceil(ROWS);
    for note in [
        format!(
            "Row r is token r / {group}, head {kv_head} x {group} + r % {group} (unpack_row). Rows {packed}-{} are past the group's {group} heads x {seqlen_q} tokens: loaded as zeros, never stored.",
            ROWS - 1
        ),
        format!(
            "With 16 new tokens (speculative decoding) the group makes {} rows: {tiles_for_16} row tiles (blockIdx.y). The bytes do not depend on the new tokens: every row of a group reads the same K/V head.",
            group * 16
        ),
    ] {
        for l in wrap(&note, (inner / CHAR_W_12) as usize) {
            ny += 17.0;
            body = body.add(text(MARGIN, ny, 12, l));
        }
        ny += 4.0;
    }
    document(
        MAX_WIDTH,
        (ny + MARGIN).ceil(),
        &format!(
            "Stage 14: GQA packing of K/V head {kv_head}'s group into one m16 tile, and the bytes it saves"
        ),
        body,
    )
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
    /// `order` is a permutation of the pool's pages,
    /// `harness::decode::DecodeProblem::pool_pages` of them (every sequence's pages and an
    /// eighth more, at least two).
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

const SEQ_FILLS: [&str; 4] = ["#9ecae1", "#fdae6b", "#a1d99b", "#bcbddc"];

/// The page-table figure: the block table of [`PagedCache::book`], the pool with each
/// page's owner and fill, and `cache_row` worked for a few keys.
pub fn page_table_svg() -> String {
    page_table_svg_with(&DecodeFns::DEFAULT)
}

/// [`page_table_svg`] computed with `fns`.
pub fn page_table_svg_with(fns: &DecodeFns) -> String {
    let cache = PagedCache::book();
    let ps = cache.page_size;
    let shift = ps.trailing_zeros();
    let rows = cache.rows(fns);
    let nseq = cache.seqlens.len();
    let inner = MAX_WIDTH - 2.0 * MARGIN;
    let examples: Vec<(u32, u32)> = vec![(0, 37), (1, 16), (2, 69)];
    let seq_fill = |b: u32| SEQ_FILLS[b as usize % SEQ_FILLS.len()];

    let (mut body, y0) = heading(
        Group::new(),
        format!(
            "A paged K/V cache: {nseq} sequences in a pool of {} pages of {ps} rows",
            cache.pool_pages
        ),
        format!("key j of sequence b: row j % {ps} of page block_table[b][j / {ps}] (cache_row)"),
    );

    // The block table.
    let mut y = y0 + 30.0;
    body = body.add(
        text(
            MARGIN,
            y,
            12,
            format!(
                "block_table [{nseq}][{}]: logical page → physical page",
                cache.pages_per_seq
            ),
        )
        .set("font-weight", "bold"),
    );
    y += 20.0;
    let label_w = 150.0;
    let cell_w = 58.0;
    let cell_h = 24.0;
    let tx = |c: u32| MARGIN + label_w + f64::from(c) * cell_w;
    body = body.add(text(MARGIN, y, 11, "logical page j/16:").set("fill", MUTED));
    for c in 0..cache.pages_per_seq {
        body = body.add(
            text(tx(c) + cell_w / 2.0, y, 11, c.to_string())
                .set("text-anchor", "middle")
                .set("fill", MUTED),
        );
    }
    y += 6.0;
    let table_top = y;
    for b in 0..nseq {
        let ry = y + b as f64 * cell_h;
        let n = cache.seqlens[b];
        body = body.add(text(MARGIN, ry + 16.0, 12, format!("seq {b} · {n} keys")));
        for c in 0..cache.pages_per_seq {
            let page = cache.table[b * cache.pages_per_seq as usize + c as usize];
            let own = c < cache.pages_of(b);
            let tip = if own {
                let last = ((c + 1) * ps).min(n) - 1;
                format!(
                    "block_table[{b}][{c}] = {page}: sequence {b}'s keys {}-{last} are rows 0-{} of page {page}",
                    c * ps,
                    last - c * ps
                )
            } else {
                format!(
                    "block_table[{b}][{c}] = {page}: past sequence {b}'s {} pages; it points at spare page {page} (NaN), which the kernel never reads since it stops at key {}",
                    cache.pages_of(b),
                    n - 1
                )
            };
            let t = text(tx(c) + cell_w / 2.0, ry + 16.0, 12, page.to_string())
                .set("text-anchor", "middle");
            body = body.add(
                titled(tip)
                    .add(
                        rect(
                            tx(c),
                            ry,
                            cell_w,
                            cell_h,
                            if own { seq_fill(b as u32) } else { EMPTY_FILL },
                        )
                        .set("stroke", INK)
                        .set("stroke-width", 0.6),
                    )
                    .add(if own {
                        t.set("font-weight", "bold")
                    } else {
                        t.set("fill", MUTED)
                    }),
            );
        }
    }
    // The legend, right of the table.
    let lx = tx(cache.pages_per_seq) + 30.0;
    let mut ly = table_top + 12.0;
    for b in 0..nseq as u32 {
        (body, _) = swatch(body, lx, ly, seq_fill(b), &format!("sequence {b}"));
        ly += 20.0;
    }
    (body, _) = swatch(body, lx, ly, EMPTY_FILL, "spare, no key (NaN)");
    y = table_top + nseq as f64 * cell_h;

    // The pool.
    y += 34.0;
    body = body.add(
        text(
            MARGIN,
            y,
            12,
            format!(
                "the pool: {} pages x {ps} rows, each row kv_heads x head_dim elements",
                cache.pool_pages
            ),
        )
        .set("font-weight", "bold"),
    );
    y += 10.0;
    let per_row = 4u32;
    let gap = 10.0;
    let pw = (inner - gap * f64::from(per_row - 1)) / f64::from(per_row);
    let ph = 72.0;
    let marked: Vec<u64> = examples
        .iter()
        .map(|&(b, j)| (fns.cache_row)(&cache.kv_cache(), b, j).expect("in the table"))
        .collect();
    for page in 0..cache.pool_pages {
        let (px, py) = (
            MARGIN + f64::from(page % per_row) * (pw + gap),
            y + f64::from(page / per_row) * (ph + gap),
        );
        let slots = &rows[(page * ps) as usize..((page + 1) * ps) as usize];
        let keys: Vec<(u32, u32)> = slots.iter().flatten().copied().collect();
        let filled = keys.len();
        let (line2, line3, fill, tip) = match (keys.first(), keys.last()) {
            (Some(&(b, j0)), Some(&(_, j1))) => (
                format!("seq {b} · logical page {}", j0 / ps),
                if j0 == j1 {
                    format!("key {j0}")
                } else {
                    format!("keys {j0}-{j1}")
                },
                seq_fill(b),
                format!(
                    "page {page}: sequence {b}'s logical page {} (block_table[{b}][{}] = {page}), keys {j0}-{j1} in rows 0-{}{}",
                    j0 / ps,
                    j0 / ps,
                    filled - 1,
                    if (filled as u32) < ps {
                        format!("; rows {filled}-{} hold no key", ps - 1)
                    } else {
                        String::new()
                    }
                ),
            ),
            _ => (
                "spare: no sequence".to_string(),
                if page == cache.spares[0] {
                    "table padding → here".to_string()
                } else {
                    String::new()
                },
                EMPTY_FILL,
                format!(
                    "page {page}: spare, no sequence's{}",
                    if page == cache.spares[0] {
                        "; the table's entries past a sequence's pages point here"
                    } else {
                        ""
                    }
                ),
            ),
        };
        let mut g = titled(tip)
            .add(
                rect(px, py, pw, ph, "#ffffff")
                    .set("stroke", INK)
                    .set("stroke-width", 0.8),
            )
            .add(rect(px, py, pw, 22.0, fill))
            .add(text(px + 8.0, py + 16.0, 12, format!("page {page}")).set("font-weight", "bold"))
            .add(
                text(px + pw - 8.0, py + 16.0, 11, format!("{filled}/{ps} rows"))
                    .set("text-anchor", "end"),
            )
            .add(text(px + 8.0, py + 37.0, 11, line2));
        if !line3.is_empty() {
            g = g.add(text(px + 8.0, py + 52.0, 11, line3).set("fill", MUTED));
        }
        body = body.add(g);
        let sw = (pw - 16.0) / f64::from(ps);
        for (r, slot) in slots.iter().enumerate() {
            let row = u64::from(page * ps) + r as u64;
            let sx = px + 8.0 + r as f64 * sw;
            let mark = marked.contains(&row);
            let tip = match slot {
                Some((b, j)) => {
                    format!("cache row {row} = page {page}, row {r}: sequence {b}, key {j}")
                }
                None => format!(
                    "cache row {row} = page {page}, row {r}: no key (NaN in the harness's cache)"
                ),
            };
            body = body.add(
                titled(tip).add(
                    rect(
                        sx,
                        py + 58.0,
                        sw - 1.0,
                        9.0,
                        slot.map_or("#ffffff", |(b, _)| seq_fill(b)),
                    )
                    .set("stroke", if mark { MARK } else { "#999999" })
                    .set("stroke-width", if mark { 1.8 } else { 0.4 }),
                ),
            );
        }
    }
    y += f64::from(cache.pool_pages.div_ceil(per_row)) * (ph + gap);

    // cache_row worked for a few keys (outlined in red above).
    y += 18.0;
    body = body.add(
        text(MARGIN, y, 12, "cache_row for three keys (outlined in red):")
            .set("font-weight", "bold"),
    );
    for (&(b, j), &row) in examples.iter().zip(&marked) {
        y += 18.0;
        let entry = j >> shift;
        body = body.add(text(
            MARGIN,
            y,
            12,
            format!(
                "seq {b}, key {j}: block_table[{b}][{j} >> {shift} = {entry}] = {}, row {j} & {} = {} → cache row {row}",
                row / u64::from(ps),
                ps - 1,
                row % u64::from(ps)
            ),
        ));
    }
    y += 8.0;
    for l in wrap(
        "The element offset is (row · kv_heads + kv_head) · head_dim (cache_row_offset). Rows no key owns, a last page's tail and the spare pages, hold NaN in the harness's cache, so a kernel that read one would fail its check.",
        (inner / CHAR_W_12) as usize,
    ) {
        y += 17.0;
        body = body.add(text(MARGIN, y, 12, l));
    }
    document(
        MAX_WIDTH,
        (y + MARGIN).ceil(),
        "Stage 14: a paged K/V cache, its block table and where cache_row finds keys",
        body,
    )
}
