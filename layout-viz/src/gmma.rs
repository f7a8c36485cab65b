//! The shared-memory layouts `wgmma` reads through its matrix descriptor, as a small model
//! and the figures drawn from it; also the figures of a TMA box landing under the 32- and
//! 64-byte swizzles, drawn from [`TmaBox`].
//!
//! A descriptor names a tile by a start address, two byte offsets and a swizzle mode. The
//! tensor cores read a 64 x 16 operand of 16-bit elements (K-major: the 16 columns along K
//! contiguous) in 16-byte pieces, and find element (row, k) at the address CUTLASS's
//! canonical GMMA layouts give (`cute/atom/mma_traits_sm90_gmma.hpp`; T = 8 elements, one
//! 16-byte unit):
//!
//! - no swizzle ("interleave"): `((8,m),(T,2k)):((1T,SBO),(1,LBO))`: core matrices of
//!   8 rows x 16 bytes, 128 contiguous bytes each, SBO apart down the rows and LBO apart
//!   along K;
//! - 32-, 64-, 128-byte swizzle: `Swizzle<1|2|3,4,3> o ((8,m),(T,2k)):((2T|4T|8T,SBO),(1,T))`:
//!   rows of 32, 64 or 128 bytes, 8 of them make a swizzle atom, atoms SBO apart; the
//!   swizzle XORs the 16-byte unit (address bits 4-6) with the 128-byte line (bits 7-9)
//!   of the absolute address, which is why a tile starts aligned to its atom.
//!
//! [`KMajor::address`] is that formula; [`tile_address`] is where a TMA load with the same
//! swizzle, in boxes whose inner dimension is the swizzle span, leaves each element of a
//! tile; [`k_step`] is the descriptor of one 16-column k-step of such a tile, as stage 11
//! computes it. The tests hold the three together, and the 128-byte case to layout-viz's
//! TMA model and the kernels' `tile_offset_tma`, which the GPU probes hold to the silicon.
//! [`MnMajor`] is V's read (N contiguous, the descriptor's transpose bit set).
//! Book: "Stage 11: wgmma".

use svg::node::element::{Circle, Group, Title};

use crate::atoms::{AtomError, TmaBox, TmaSwizzle};
use crate::render;

/// Bytes of one element (bf16 / f16).
pub const ELEM_BYTES: u64 = 2;

/// The bytes a row of one swizzle atom spans: 16 (one core-matrix row) when unswizzled.
pub fn row_bytes(mode: TmaSwizzle) -> u64 {
    mode.span_bytes().map_or(16, u64::from)
}

/// The descriptor's 2-bit layout type (bits 62-63): 0 none, 1 128B, 2 64B, 3 32B.
pub fn layout_type(mode: TmaSwizzle) -> u64 {
    match mode {
        TmaSwizzle::None => 0,
        TmaSwizzle::B128 => 1,
        TmaSwizzle::B64 => 2,
        TmaSwizzle::B32 => 3,
    }
}

/// The name the book uses for a mode.
pub fn mode_name(mode: TmaSwizzle) -> &'static str {
    match mode {
        TmaSwizzle::None => "no swizzle (interleave)",
        TmaSwizzle::B32 => "32-byte swizzle",
        TmaSwizzle::B64 => "64-byte swizzle",
        TmaSwizzle::B128 => "128-byte swizzle",
    }
}

/// A K-major operand as a descriptor describes it. Byte addresses throughout: the
/// descriptor stores each of `start`, `lbo`, `sbo` divided by 16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KMajor {
    pub mode: TmaSwizzle,
    /// The start address (of element (0, 0), before the swizzle).
    pub start: u64,
    /// Leading-dimension byte offset: from one core matrix to the next along K. Read only
    /// without a swizzle; the swizzled modes take K's 16-byte units from inside the row.
    pub lbo: u64,
    /// Stride-dimension byte offset: from one 8-row group to the next.
    pub sbo: u64,
}

impl KMajor {
    /// The byte address of element (row, k), k < 16 (one instruction's K).
    pub fn address(&self, row: u32, k: u32) -> u64 {
        let (r0, r1) = (u64::from(row % 8), u64::from(row / 8));
        let (k0, k1) = (u64::from(k % 8), u64::from(k / 8));
        match self.mode {
            TmaSwizzle::None => {
                self.start + 16 * r0 + self.sbo * r1 + ELEM_BYTES * k0 + self.lbo * k1
            }
            mode => mode.apply(
                self.start + row_bytes(mode) * r0 + self.sbo * r1 + ELEM_BYTES * k0 + 16 * k1,
            ),
        }
    }

    /// The 64-bit descriptor (base offset 0: the tile is aligned to its swizzle atom).
    pub fn encode(&self) -> u64 {
        ((self.start & 0x3FFFF) >> 4)
            | (((self.lbo >> 4) & 0x3FFF) << 16)
            | (((self.sbo >> 4) & 0x3FFF) << 32)
            | (layout_type(self.mode) << 62)
    }
}

/// An MN-major operand with the 128-byte swizzle (V in O += P V: the keys, K of the
/// product, are the rows; N runs along them). CUTLASS:
/// `Swizzle<3,4,3> o ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))`: 64 elements of N in a 128-byte
/// row, LBO to the next 64 of N, 8 rows of K an atom, SBO to the next 8 rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MnMajor {
    pub start: u64,
    pub lbo: u64,
    pub sbo: u64,
}

impl MnMajor {
    /// The byte address of element (k, n): row k (a key), column n.
    pub fn address(&self, k: u32, n: u32) -> u64 {
        let (n01, n2) = (u64::from(n % 64), u64::from(n / 64));
        let (k0, k1) = (u64::from(k % 8), u64::from(k / 8));
        TmaSwizzle::B128
            .apply(self.start + ELEM_BYTES * n01 + self.lbo * n2 + 128 * k0 + self.sbo * k1)
    }
}

/// Columns of one box: the swizzle span (8 unswizzled: one 16-byte core-matrix column).
pub fn box_cols(mode: TmaSwizzle) -> u32 {
    (row_bytes(mode) / ELEM_BYTES) as u32
}

/// Where a `[rows][cols]` tile loaded by TMA with `mode`, in boxes of `rows` x
/// [`box_cols`] placed one after the other, leaves element (row, col): a byte offset from
/// the tile's (atom-aligned) start.
pub fn tile_address(mode: TmaSwizzle, rows: u32, row: u32, col: u32) -> u64 {
    let (bc, rb) = (box_cols(mode), row_bytes(mode));
    let block = u64::from(col / bc) * u64::from(rows) * rb;
    block + mode.apply(u64::from(row) * rb + ELEM_BYTES * u64::from(col % bc))
}

/// The descriptor of k-step `kk` (columns 16 kk .. 16 kk + 15) of such a tile: stage 11's
/// `q_desc` / `k_desc` for the 128-byte swizzle, and the same arithmetic for the others.
pub fn k_step(mode: TmaSwizzle, rows: u32, kk: u32) -> KMajor {
    let (bc, rb) = (box_cols(mode), row_bytes(mode));
    let box_bytes = u64::from(rows) * rb;
    match mode {
        // A k-step is two 8-column boxes: start at the first, LBO to the second.
        TmaSwizzle::None => KMajor {
            mode,
            start: u64::from(2 * kk) * box_bytes,
            lbo: box_bytes,
            sbo: 8 * 16,
        },
        // Inside a box row, 32 bytes further per k-step; a box further every span / 32.
        _ => KMajor {
            mode,
            start: u64::from(16 * kk / bc) * box_bytes + ELEM_BYTES * u64::from(16 * kk % bc),
            lbo: 16,
            sbo: 8 * rb,
        },
    }
}

// render.rs's ink and font, ring.rs's rules: every text at least 12px, the figure at most
// 740px wide, the book's column, so it is never scaled down.
pub use crate::svg_kit::MAX_WIDTH;
use crate::svg_kit::{INK, MARGIN, MARK, MUTED, document, fmt, line, rect, text};

fn cell(x: f64, y: f64, w: f64, h: f64, fill: &str, label: &str, tip: &str) -> Group {
    Group::new()
        .set("class", "cell")
        .add(Title::new(tip))
        .add(
            rect(x, y, w, h, fill)
                .set("stroke", "#555555")
                .set("stroke-width", 0.6),
        )
        .add(text(x + w / 2.0, y + h / 2.0 + 4.5, 12, label).set("text-anchor", "middle"))
}

/// A double-headed arrow with a label beside its middle.
fn arrow(x1: f64, y1: f64, x2: f64, y2: f64, label: &str, right_of: bool) -> Group {
    let head = |x: f64, y: f64, dx: f64, dy: f64| {
        // A small V at (x, y) opening against the direction (dx, dy).
        let (px, py) = (-dy, dx);
        Group::new()
            .add(line(
                x,
                y,
                x - 6.0 * dx + 4.0 * px,
                y - 6.0 * dy + 4.0 * py,
                MARK,
                1.5,
            ))
            .add(line(
                x,
                y,
                x - 6.0 * dx - 4.0 * px,
                y - 6.0 * dy - 4.0 * py,
                MARK,
                1.5,
            ))
    };
    let len = ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt().max(1.0);
    let (dx, dy) = ((x2 - x1) / len, (y2 - y1) / len);
    let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
    let label = if right_of {
        text(mx.max(x2) + 8.0, my + 4.5, 12, label)
    } else {
        text(mx, my - 6.0, 12, label).set("text-anchor", "middle")
    };
    Group::new()
        .add(line(x1, y1, x2, y2, MARK, 1.5))
        .add(head(x2, y2, dx, dy))
        .add(head(x1, y1, -dx, -dy))
        .add(label.set("fill", MARK))
}

/// Rows of the tile the figure draws: two 8-row groups, enough to show SBO.
const SHOWN_ROWS: u32 = 16;

/// The figure of a 64 x 64 16-bit K-major tile under `mode`: the first 16 rows, each
/// 16-byte chunk (8 columns) labelled with the byte offset it lives at and filled by its
/// 16-byte slot in its 128-byte line (so by its 4 banks); each k-step's start address
/// marked, SBO and LBO drawn, the formula and the descriptor of k-step 0 below.
pub fn kmajor_svg(mode: TmaSwizzle) -> String {
    const ROWS: u32 = 64;
    const CHUNKS: u32 = 8;
    let (cw, ch) = (70.0, 22.0);
    let x0 = MARGIN + 52.0;
    let mut y = MARGIN;
    let title = format!("wgmma K-major, {}: a 64x64 16-bit tile", mode_name(mode));
    let mut g = Group::new();
    g = g.add(text(MARGIN, y + 14.0, 16, title.as_str()).set("font-weight", "bold"));
    y += 30.0;
    let d0 = k_step(mode, ROWS, 0);
    let sub = match mode {
        TmaSwizzle::None => format!(
            "rows 0-15 of 64; each cell: 8 columns (16 B) at byte offset +N; SBO {} B, LBO {} B",
            d0.sbo, d0.lbo
        ),
        _ => format!(
            "rows 0-15 of 64; each cell: 8 columns (16 B) at byte offset +N; SBO {} B",
            d0.sbo
        ),
    };
    g = g.add(text(MARGIN, y + 12.0, 12, sub));
    y += 26.0;
    // k-step headers and column headers.
    for kk in 0..CHUNKS / 2 {
        let x = x0 + f64::from(2 * kk) * cw;
        g = g
            .add(text(x + cw, y + 12.0, 12, format!("k-step {kk}")).set("text-anchor", "middle"))
            .add(line(
                x + 3.0,
                y + 17.0,
                x + 2.0 * cw - 3.0,
                y + 17.0,
                MUTED,
                1.0,
            ));
    }
    y += 22.0;
    for c in 0..CHUNKS {
        g = g.add(
            text(
                x0 + (f64::from(c) + 0.5) * cw,
                y + 12.0,
                12,
                format!("{}-{}", 8 * c, 8 * c + 7),
            )
            .set("text-anchor", "middle")
            .set("fill", MUTED),
        );
    }
    y += 18.0;
    let gy = y;
    for r in 0..SHOWN_ROWS {
        g = g.add(
            text(
                x0 - 6.0,
                gy + (f64::from(r) + 0.5) * ch + 4.5,
                12,
                format!("row {r}"),
            )
            .set("text-anchor", "end")
            .set("fill", MUTED),
        );
        for c in 0..CHUNKS {
            let kk = c / 2;
            let k = 8 * (c % 2);
            let addr = k_step(mode, ROWS, kk).address(r, k);
            let slot = (addr / 16) % 8;
            let tip = format!(
                "row {r}, columns {}-{}: bytes {addr}-{} (line {}, slot {slot}, banks {}-{}), k-step {kk}",
                8 * c,
                8 * c + 7,
                addr + 15,
                addr / 128,
                4 * slot,
                4 * slot + 3
            );
            g = g.add(cell(
                x0 + f64::from(c) * cw,
                gy + f64::from(r) * ch,
                cw,
                ch,
                render::color(slot),
                &format!("+{addr}"),
                &tip,
            ));
        }
    }
    let grid_w = f64::from(CHUNKS) * cw;
    let grid_h = f64::from(SHOWN_ROWS) * ch;
    // The core matrix at (0, 0): 8 rows x 16 bytes, one piece of every wgmma read.
    g = g.add(
        rect(x0, gy, cw, 8.0 * ch, "none")
            .set("stroke", INK)
            .set("stroke-width", 2.5),
    );
    // Each k-step's start address: a dot in the corner of its (0, 0) cell.
    for kk in 0..CHUNKS / 2 {
        g = g.add(
            Circle::new()
                .set("cx", fmt(x0 + f64::from(2 * kk) * cw + 6.0))
                .set("cy", fmt(gy + 6.0))
                .set("r", 4)
                .set("fill", MARK),
        );
    }
    // SBO: row 0 to row 8, on the right.
    let ax = x0 + grid_w + 12.0;
    g = g.add(arrow(
        ax,
        gy + 0.5 * ch,
        ax,
        gy + 8.5 * ch,
        &format!("SBO {} B", d0.sbo),
        true,
    ));
    y = gy + grid_h + 8.0;
    // LBO: core matrix (0, 0) to the next along K, under the grid (read only unswizzled).
    if mode == TmaSwizzle::None {
        g = g.add(arrow(
            x0 + 0.5 * cw,
            y + 20.0,
            x0 + 1.5 * cw,
            y + 20.0,
            &format!("LBO {} B: core matrix (0,0) to the next along K", d0.lbo),
            true,
        ));
        y += 30.0;
    }
    y += 8.0;
    let mut caption = vec![
        "red dot: the descriptor's start address of each k-step; black: one core matrix"
            .to_string(),
    ];
    let starts: Vec<String> = (0..CHUNKS / 2)
        .map(|kk| format!("+{}", k_step(mode, ROWS, kk).start))
        .collect();
    match mode {
        TmaSwizzle::None => {
            caption
                .push("addr(r, k) = start + 16(r%8) + SBO(r/8) + 2(k%8) + LBO(k/8), k < 16".into());
            caption.push("CUTLASS: ((8,m),(T,2k)):((1T,SBO),(1,LBO)), T = 8 elements".into());
        }
        _ => {
            let (b, m, s) = mode.as_swizzle().unwrap_or((0, 4, 3));
            caption.push(format!(
                "addr(r, k) = Swizzle<{b},{m},{s}>(start + {}(r%8) + SBO(r/8) + 2k), k < 16",
                row_bytes(mode)
            ));
            caption.push(format!(
                "CUTLASS: Swizzle<{b},4,3> o ((8,m),(T,2k)):(({}T,SBO),(1,T)); LBO unused",
                row_bytes(mode) / 16
            ));
        }
    }
    caption.push(format!(
        "k-step starts {}; descriptor of k-step 0 {:#018x}",
        starts.join(", "),
        d0.encode()
    ));
    caption.push(
        "fill: the 16-byte slot in its 128-byte line; rows 16-63 repeat +SBO per 8 rows".into(),
    );
    for l in &caption {
        g = g.add(text(MARGIN, y + 12.0, 12, l.as_str()));
        y += 19.0;
    }
    document(MAX_WIDTH, (y + MARGIN).ceil(), &title, g)
}

/// The figure of an 8-row TMA box landing under the 32- or 64-byte swizzle, its inner
/// dimension the span (16 or 32 columns of 16-bit elements): the box in global memory,
/// chunk by chunk, and the 128-byte lines of shared memory it fills, from [`TmaBox`].
pub fn tma_landing_svg(mode: TmaSwizzle) -> Result<String, AtomError> {
    let span = mode.span_bytes().unwrap_or(16);
    let cols = span / 2;
    let b = TmaBox::new((16, 128), (8, cols), (8, 64), 2, mode)?;
    let cells = b.cells();
    let chunks = cols / 8;
    let lines = 8 * span / 128;
    let (cw, ch) = (50.0, 24.0);
    let mut g = Group::new();
    let mut y = MARGIN;
    let title = format!("TMA: an 8x{cols} box, {} (span {span} B)", mode_name(mode));
    g = g.add(text(MARGIN, y + 14.0, 16, title.as_str()).set("font-weight", "bold"));
    y += 34.0;
    let left_x = MARGIN + 30.0;
    let right_x = left_x + f64::from(chunks) * cw + 70.0;
    g = g
        .add(text(left_x - 30.0, y + 12.0, 13, "box (global)").set("font-weight", "bold"))
        .add(
            text(
                right_x - 44.0,
                y + 12.0,
                13,
                "shared memory, 128-byte lines",
            )
            .set("font-weight", "bold"),
        );
    y += 24.0;
    for c in 0..chunks {
        g = g.add(
            text(
                left_x + (f64::from(c) + 0.5) * cw,
                y + 12.0,
                12,
                format!("c{c}"),
            )
            .set("text-anchor", "middle")
            .set("fill", MUTED),
        );
    }
    for s in 0..8u32 {
        g = g.add(
            text(
                right_x + (f64::from(s) + 0.5) * cw,
                y + 12.0,
                12,
                format!("{}B", 16 * s),
            )
            .set("text-anchor", "middle")
            .set("fill", MUTED),
        );
    }
    y += 18.0;
    for r in 0..8u32 {
        g = g.add(
            text(
                left_x - 6.0,
                y + (f64::from(r) + 0.5) * ch + 4.5,
                12,
                format!("r{r}"),
            )
            .set("text-anchor", "end")
            .set("fill", MUTED),
        );
    }
    for l in 0..lines {
        g = g.add(
            text(
                right_x - 6.0,
                y + (f64::from(l) + 0.5) * ch + 4.5,
                12,
                format!("@{}", 128 * l),
            )
            .set("text-anchor", "end")
            .set("fill", MUTED),
        );
    }
    for r in 0..8u32 {
        for c in 0..chunks {
            let first = cells[(r * cols + c * 8) as usize];
            let (line_no, slot) = (first.smem_byte / 128, (first.smem_byte % 128) / 16);
            let fill = render::color(u64::from(c));
            let (gr, gc) = first.global.unwrap_or((0, 0));
            let what = format!(
                "box row {r}, columns {}-{} = global ({gr}, {gc}-{})",
                8 * c,
                8 * c + 7,
                gc + 7
            );
            let to = format!(
                "smem bytes {}-{} (line {line_no}, slot {slot}, banks {}-{})",
                first.smem_byte,
                first.smem_byte + 15,
                4 * slot,
                4 * slot + 3
            );
            g = g
                .add(cell(
                    left_x + f64::from(c) * cw,
                    y + f64::from(r) * ch,
                    cw,
                    ch,
                    fill,
                    &format!("r{r}c{c}"),
                    &format!("{what} -> {to}"),
                ))
                .add(cell(
                    right_x + slot as f64 * cw,
                    y + line_no as f64 * ch,
                    cw,
                    ch,
                    fill,
                    &format!("r{r}c{c}"),
                    &format!("{to}: {what}"),
                ));
        }
    }
    y += 8.0 * ch + 16.0;
    let (bits, m, s) = mode.as_swizzle().unwrap_or((0, 4, 3));
    let caption = [
        format!(
            "Swizzle<{bits},{m},{s}> on byte addresses: 16-byte unit ^= (address / 128) mod {}",
            1 << bits
        ),
        format!(
            "each box row is {span} bytes, {} of them to a 128-byte line; fill = box chunk",
            128 / span
        ),
        "the box starts at (8, 64) of a 16x128 tensor; 128 bytes: tma-box-8x64-sw128.svg"
            .to_string(),
    ];
    for l in &caption {
        g = g.add(text(MARGIN, y + 12.0, 12, l.as_str()));
        y += 19.0;
    }
    Ok(document(MAX_WIDTH, (y + MARGIN).ceil(), &title, g))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODES: [TmaSwizzle; 4] = [
        TmaSwizzle::None,
        TmaSwizzle::B32,
        TmaSwizzle::B64,
        TmaSwizzle::B128,
    ];

    /// The descriptor of each k-step, read through CUTLASS's canonical formula, finds every
    /// element of the tile where TMA left it: the figures' labels are both.
    #[test]
    fn each_k_steps_descriptor_reads_the_tile_as_tma_lays_it_out() {
        for mode in MODES {
            for rows in [64u32, 128] {
                for col in 0..64 {
                    for row in 0..rows {
                        let desc = k_step(mode, rows, col / 16);
                        assert_eq!(
                            desc.address(row, col % 16),
                            tile_address(mode, rows, row, col),
                            "{mode:?} rows {rows}: ({row}, {col})"
                        );
                    }
                }
            }
        }
    }

    /// `tile_address` is layout-viz's TMA model box by box, for all four modes: the model
    /// the TMA probe holds to the hardware.
    #[test]
    fn tile_address_is_the_tma_model() {
        for mode in MODES {
            let bc = box_cols(mode);
            for j in 0..64 / bc {
                let model = TmaBox::new((64, 64), (64, bc), (0, j * bc), 2, mode).unwrap();
                for cell in model.cells() {
                    let base = u64::from(j) * 64 * row_bytes(mode);
                    assert_eq!(
                        tile_address(mode, 64, cell.box_row, j * bc + cell.box_col),
                        base + cell.smem_byte,
                        "{mode:?}: ({}, {})",
                        cell.box_row,
                        j * bc + cell.box_col
                    );
                }
            }
        }
    }

    /// Every k-step reads each 16-byte slot of a 128-byte line once per 8 rows: the 8 rows
    /// of a core matrix column fall in 8 different groups of 4 banks, in every mode.
    #[test]
    fn a_core_matrix_column_spans_all_eight_slots() {
        for mode in MODES {
            for kk in 0..4 {
                for k in [0u32, 8] {
                    let slots: std::collections::BTreeSet<u64> = (0..8)
                        .map(|r| (k_step(mode, 64, kk).address(r, k) / 16) % 8)
                        .collect();
                    assert_eq!(slots.len(), 8, "{mode:?} k-step {kk} k {k}");
                }
            }
        }
    }

    /// The 128-byte case is what the kernels lay out: `tile_offset_tma`, for both tile
    /// heights and head dims (a d128 tile is two 64-column boxes).
    #[test]
    fn the_128_byte_case_is_the_kernels_tile_offset_tma() {
        use crate::kernel_fns::{TMA_TILE_ROWS, tile_offset_tma};
        for rows in TMA_TILE_ROWS {
            for col in 0..128 {
                for row in 0..rows {
                    assert_eq!(
                        tile_address(TmaSwizzle::B128, rows, row, col),
                        2 * tile_offset_tma(rows, row, col).unwrap(),
                        "rows {rows}: ({row}, {col})"
                    );
                }
            }
        }
    }

    /// Stage 11's own descriptors (`wgmma.cu`'s `descriptors` anchor, its arithmetic
    /// copied here: element offsets times 2), read through the canonical layouts, find
    /// every element of Q, K and V where `tile_offset_tma` put it: Q's rows of each
    /// warpgroup and K's 128 keys K-major, V MN-major, at d = 64 and 128.
    #[test]
    fn stage_11s_descriptors_read_its_tiles() {
        use crate::kernel_fns::tile_offset_tma;
        const BLOCK_Q: u32 = 128;
        const BLOCK_KV: u32 = 128;
        let at = |rows: u32, row: u32, col: u32| 2 * tile_offset_tma(rows, row, col).unwrap();
        for d in [64u32, 128] {
            for kk in 0..d / 16 {
                for wg in 0..2u32 {
                    let q = KMajor {
                        mode: TmaSwizzle::B128,
                        start: 2 * u64::from(
                            (kk / 4) * BLOCK_Q * 64 + wg * 64 * 64 + (kk % 4) * 16,
                        ),
                        lbo: 16,
                        sbo: 1024,
                    };
                    for r in 0..64 {
                        for k in 0..16 {
                            assert_eq!(q.address(r, k), at(BLOCK_Q, 64 * wg + r, 16 * kk + k));
                        }
                    }
                }
                let k_desc = KMajor {
                    mode: TmaSwizzle::B128,
                    start: 2 * u64::from((kk / 4) * BLOCK_KV * 64 + (kk % 4) * 16),
                    lbo: 16,
                    sbo: 1024,
                };
                for key in 0..BLOCK_KV {
                    for k in 0..16 {
                        assert_eq!(k_desc.address(key, k), at(BLOCK_KV, key, 16 * kk + k));
                    }
                }
            }
            for kk in 0..BLOCK_KV / 16 {
                let v = MnMajor {
                    start: 2 * u64::from(kk * 16 * 64),
                    lbo: u64::from(BLOCK_KV * 64) * 2,
                    sbo: 1024,
                };
                for k in 0..16 {
                    for n in 0..d {
                        assert_eq!(
                            v.address(k, n),
                            at(BLOCK_KV, 16 * kk + k, n),
                            "V k-step {kk}: ({k}, {n})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_descriptor_fields() {
        let d = k_step(TmaSwizzle::B128, 64, 0);
        assert_eq!(d.encode(), (1 << 62) | (64 << 32) | (1 << 16));
        let d = k_step(TmaSwizzle::None, 64, 1);
        assert_eq!(
            d.encode(),
            (2048 >> 4) | ((1024 >> 4) << 16) | ((128 >> 4) << 32)
        );
    }

    #[test]
    fn the_figures_fit_the_column_with_text_of_12px_or_more() {
        let mut svgs: Vec<String> = MODES.iter().map(|&m| kmajor_svg(m)).collect();
        svgs.push(tma_landing_svg(TmaSwizzle::B32).unwrap());
        svgs.push(tma_landing_svg(TmaSwizzle::B64).unwrap());
        for svg in &svgs {
            assert!(svg.contains(r#"width="740""#));
            for (i, _) in svg.match_indices("font-size=\"") {
                let size: u32 = svg[i + 11..].split('"').next().unwrap().parse().unwrap();
                assert!(size >= 12, "font-size {size}");
            }
        }
        // Row 1's first chunk under the 128-byte swizzle: line 1, slot 1.
        assert!(svgs[3].contains("row 1, columns 0-7: bytes 144-159"));
    }
}
