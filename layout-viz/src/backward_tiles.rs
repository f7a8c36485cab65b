//! Stage 25's warp tiles, drawn (`backward-warp-tiles.svg`): which of the main kernel's 8
//! warps computes which part of each product of a step, at d = 128 and at d = 64. Three
//! panels a head dim: S and dP (a step's queries by the block's keys), dV and dK (the
//! block's keys by the head dim's columns) and dQ (the step's queries by the columns), each
//! drawn to scale and split into the 8 warps' rectangles, every warp in its own colour in
//! every panel.
//!
//! Nothing is typed in twice: the tile sizes are stage 25's own (`tiles.rs`, which the
//! kernel asserts its constants equal), each warp's rectangle comes from the functions
//! below, which mirror the kernel's `warp_tiles` lines, and the figure is drawn only once
//! every element of each tile is owned by exactly one warp ([`owned_once`]) and the tiles'
//! shapes compose ([`composes`]). Book: "Stage 25: the backward's warp tiles", section
//! "The warps' tiles".

use svg::node::element::{Group, Title};

use crate::render;
// backward.rs's (and fp8.rs's) rules: the figure exactly the book's column wide (never
// scaled down), every text 12px or more.
use crate::svg_kit::{
    CHAR_W_12, HEADING_CHAR_W, INK, MARGIN, MARK, MAX_WIDTH, MUTED, document, line, paragraph,
    rect, text, title_paragraph,
};

/// Stage 25's tile shapes, the one definition its kernels and its launcher use.
#[allow(dead_code)]
mod stage25 {
    include!("../../stages/25-backward-warp-tiles/src/tiles.rs");
}
/// Warps per block of the main kernel.
pub const WARPS: u32 = stage25::WARPS;
/// Keys one block owns: the columns of S and dP, the rows of dV and dK, the k of dQ.
pub const BLOCK_KV: u32 = stage25::BLOCK_KV;
/// The head dims stage 25 runs, in the order the figure draws them.
pub const HEAD_DIMS: [u32; 2] = [128, 64];
/// Rows of a warp's tile in every product: two m16 fragments (`acc[2][NT][4]`,
/// `acc[2][D / 16][4]`, `dq[2][D / WN / 8][4]`).
pub const WARP_ROWS: u32 = 32;
/// Pixels per element of a tile's side: the largest tile, 128 x 128, is 192px square, and
/// three panels of 128 columns fit the column side by side.
pub const PX_PER_ELEMENT: f64 = 1.5;
/// The warp outlined in every panel, to follow one warp across the products.
pub const FOLLOWED: u32 = 3;
/// `ldmatrix.x4` a warp and step at d = 128 in stage 22's kernel (S, dP, dV, dK, dQ), as
/// chapter 25's table counts them: stage 22's S and dP tiles reload their 16 keys' A
/// fragment for each chunk of 32 queries, and its P^T and dS^T come from registers, which
/// this module does not model.
pub const STAGE22_LDMATRIX_D128: [u32; 5] = [48, 48, 32, 32, 40];

/// Query rows per step at head dim `d`: stage 25's `block_q` (128 at d64, 64 at d128).
pub const fn block_q(d: u32) -> u32 {
    stage25::block_q(d as usize)
}

/// The kernel's warp grid at head dim `d`:
/// `constexpr int WM = BLOCK_Q / 32, WN = WARPS / WM, KEYS_W = BLOCK_KV / WN`, as
/// (WM, WN, KEYS_W): WM warps along the queries of S, dP and dQ, WN along their keys or
/// columns, and the keys of a warp's S and dP tile.
pub const fn warp_grid(d: u32) -> (u32, u32, u32) {
    let wm = block_q(d) / WARP_ROWS;
    let wn = WARPS / wm;
    (wm, wn, BLOCK_KV / wn)
}

/// One warp's part of a tile: rows `row0..row0 + rows`, columns `col0..col0 + cols`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpTile {
    pub row0: u32,
    pub rows: u32,
    pub col0: u32,
    pub cols: u32,
}

impl WarpTile {
    pub fn contains(&self, row: u32, col: u32) -> bool {
        (self.row0..self.row0 + self.rows).contains(&row)
            && (self.col0..self.col0 + self.cols).contains(&col)
    }
}

/// S = Q K^T and dP = dO V^T: the kernel's
/// `const int sq = 32 * (warp % WM), sk = KEYS_W * (warp / WM);  // S and dP: queries, keys`
/// and `warp_tile_qk`'s `acc[2][NT][4]`, NT = KEYS_W / 8: 32 queries by KEYS_W keys.
pub fn s_warp_tile(d: u32, warp: u32) -> WarpTile {
    let (wm, _, keys_w) = warp_grid(d);
    WarpTile {
        row0: 32 * (warp % wm),
        rows: WARP_ROWS,
        col0: keys_w * (warp / wm),
        cols: keys_w,
    }
}

/// dV += P^T dO and dK += dS^T Q: the kernel's
/// `const int kvk = 32 * (warp % 4), kvd = D / 2 * (warp / 4);    // dV and dK: keys, columns`
/// and `warp_tile_kv`'s `float (&acc)[2][D / 16][4]`: 32 keys by D / 2 columns.
pub fn kv_warp_tile(d: u32, warp: u32) -> WarpTile {
    WarpTile {
        row0: 32 * (warp % 4),
        rows: WARP_ROWS,
        col0: d / 2 * (warp / 4),
        cols: d / 2,
    }
}

/// dQ = dS K: the kernel's
/// `const int qq = 32 * (warp % WM), qd = D / WN * (warp / WM);   // dQ: queries, columns`
/// and its `float dq[2][D / WN / 8][4]` (`ANCHOR: dq_atomics`): 32 queries by D / WN columns.
pub fn dq_warp_tile(d: u32, warp: u32) -> WarpTile {
    let (wm, wn, _) = warp_grid(d);
    WarpTile {
        row0: 32 * (warp % wm),
        rows: WARP_ROWS,
        col0: d / wn * (warp / wm),
        cols: d / wn,
    }
}

/// A panel: the tile that one or two of a step's products share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    /// S = Q K^T and dP = dO V^T: BLOCK_Q queries by BLOCK_KV keys.
    SdP,
    /// dV += P^T dO and dK += dS^T Q: BLOCK_KV keys by d columns.
    DvDk,
    /// dQ = dS K: BLOCK_Q queries by d columns.
    Dq,
}

impl Panel {
    pub const ALL: [Panel; 3] = [Panel::SdP, Panel::DvDk, Panel::Dq];

    /// The products as the kernel's comments write them.
    pub fn heading(self) -> &'static str {
        match self {
            Panel::SdP => "S = Q K^T, dP = dO V^T",
            Panel::DvDk => "dV += P^T dO, dK += dS^T Q",
            Panel::Dq => "dQ = dS K",
        }
    }

    /// The products, for the tooltips.
    fn products(self) -> &'static str {
        match self {
            Panel::SdP => "S and dP",
            Panel::DvDk => "dV and dK",
            Panel::Dq => "dQ",
        }
    }

    /// What the rows and the columns are.
    pub fn sides(self) -> (&'static str, &'static str) {
        match self {
            Panel::SdP => ("queries", "keys"),
            Panel::DvDk => ("keys", "columns"),
            Panel::Dq => ("queries", "columns"),
        }
    }

    /// The tile's rows and columns at head dim `d`.
    pub fn shape(self, d: u32) -> (u32, u32) {
        match self {
            Panel::SdP => (block_q(d), BLOCK_KV),
            Panel::DvDk => (BLOCK_KV, d),
            Panel::Dq => (block_q(d), d),
        }
    }

    /// The length of the sum each element takes: d for S and dP, the step's queries for
    /// dV and dK, the block's keys for dQ.
    pub fn k(self, d: u32) -> u32 {
        match self {
            Panel::SdP => d,
            Panel::DvDk => block_q(d),
            Panel::Dq => BLOCK_KV,
        }
    }

    /// Warp `warp`'s part of the tile at head dim `d`.
    pub fn warp_tile(self, d: u32, warp: u32) -> WarpTile {
        match self {
            Panel::SdP => s_warp_tile(d, warp),
            Panel::DvDk => kv_warp_tile(d, warp),
            Panel::Dq => dq_warp_tile(d, warp),
        }
    }

    /// `ldmatrix.x4` a warp issues a step for one product of the panel: per k-step of 16,
    /// one for each of its two A fragments (16 rows each) and one for each pair of n8 B
    /// fragments, as `warp_tile_qk`, `warp_tile_kv` and the dQ block load them (all of
    /// stage 25's operands, P and dS too, come from shared memory).
    pub fn ldmatrix_x4(self, d: u32) -> u32 {
        let t = self.warp_tile(d, 0);
        self.k(d) / 16 * (t.rows / 16 + t.cols / 16)
    }

    /// `mma.sync` m16n8k16 a warp issues a step for one product of the panel.
    pub fn mma(self, d: u32) -> u32 {
        let t = self.warp_tile(d, 0);
        self.k(d) / 16 * (t.rows / 16) * (t.cols / 8)
    }
}

/// `ldmatrix.x4` a warp and step at head dim `d` for S, dP, dV, dK and dQ, in that order
/// (chapter 25's table's columns).
pub fn ldmatrix_x4_per_product(d: u32) -> [u32; 5] {
    let (s, kv, q) = (
        Panel::SdP.ldmatrix_x4(d),
        Panel::DvDk.ldmatrix_x4(d),
        Panel::Dq.ldmatrix_x4(d),
    );
    [s, s, kv, kv, q]
}

/// `mma.sync` a warp issues a step at head dim `d`, over the five products.
pub fn mma_per_step(d: u32) -> u32 {
    2 * Panel::SdP.mma(d) + 2 * Panel::DvDk.mma(d) + Panel::Dq.mma(d)
}

/// Every element of the panel's tile at head dim `d` lies in exactly one warp's tile, and
/// no warp's tile reaches past it.
pub fn owned_once(panel: Panel, d: u32) -> bool {
    let (rows, cols) = panel.shape(d);
    let tiles: Vec<WarpTile> = (0..WARPS).map(|w| panel.warp_tile(d, w)).collect();
    (0..rows).all(|r| (0..cols).all(|c| tiles.iter().filter(|t| t.contains(r, c)).count() == 1))
        && tiles
            .iter()
            .all(|t| t.row0 + t.rows <= rows && t.col0 + t.cols <= cols)
}

/// The three tiles' shapes compose at head dim `d`: S (BLOCK_Q x BLOCK_KV) = Q (BLOCK_Q x
/// d) K^T; dV (BLOCK_KV x d) += P^T dO, P^T being S's tile transposed and dO BLOCK_Q x d;
/// dQ (BLOCK_Q x d) = dS K, dS being S's tile and K BLOCK_KV x d.
pub fn composes(d: u32) -> bool {
    let (s, kv, q) = (
        Panel::SdP.shape(d),
        Panel::DvDk.shape(d),
        Panel::Dq.shape(d),
    );
    s == (block_q(d), BLOCK_KV)
        && Panel::SdP.k(d) == d
        // P^T dO: S's columns are dV's rows, S's rows the sum, dO's columns dV's.
        && kv == (s.1, d)
        && Panel::DvDk.k(d) == s.0
        // dS K: S's rows are dQ's, S's columns the sum, K's columns dQ's.
        && q == (s.0, kv.1)
        && Panel::Dq.k(d) == s.1
}

/// Left of each panel: its rows' tick numbers.
const TICK_ROOM: f64 = 32.0;
/// The widest a panel is drawn: 128 elements.
const PANEL_MAX: f64 = 128.0 * PX_PER_ELEMENT;
/// Between one panel's right edge and the next one's ticks: what the column leaves.
const GAP: f64 = (MAX_WIDTH - 2.0 * MARGIN - 3.0 * (TICK_ROOM + PANEL_MAX)) / 2.0;

/// The x of panel `i`'s left edge (the panels stand in the same places in both rows).
fn panel_x(i: usize) -> f64 {
    MARGIN + TICK_ROOM + i as f64 * (TICK_ROOM + PANEL_MAX + GAP)
}

/// The distinct starts of the warps' tiles along one side, and the side's end: where the
/// ticks go.
fn boundaries(mut starts: Vec<u32>, end: u32) -> Vec<u32> {
    starts.push(end);
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// Warp `w`'s rectangle: a `<g class="cell">` with its tooltip first (as render.rs draws
/// cells, so the book's hover text and the tests find it), filled with the warp's colour
/// and labelled `w5`.
fn warp_cell(x0: f64, top: f64, panel: Panel, d: u32, w: u32) -> Group {
    let t = panel.warp_tile(d, w);
    let (rows, cols) = panel.sides();
    let tip = format!(
        "d = {d}, warp {w}, {}: {rows} {}-{} × {cols} {}-{} ({} × {})",
        panel.products(),
        t.row0,
        t.row0 + t.rows - 1,
        t.col0,
        t.col0 + t.cols - 1,
        t.rows,
        t.cols
    );
    let (x, y) = (
        x0 + f64::from(t.col0) * PX_PER_ELEMENT,
        top + f64::from(t.row0) * PX_PER_ELEMENT,
    );
    let (w_px, h_px) = (
        f64::from(t.cols) * PX_PER_ELEMENT,
        f64::from(t.rows) * PX_PER_ELEMENT,
    );
    Group::new()
        .set("class", "cell")
        .add(Title::new(tip))
        .add(
            rect(x, y, w_px, h_px, render::color(w.into()))
                .set("stroke", INK)
                .set("stroke-width", 0.8),
        )
        .add(
            text(x + w_px / 2.0, y + h_px / 2.0 + 4.5, 13, format!("w{w}"))
                .set("text-anchor", "middle")
                .set("font-weight", "bold"),
        )
}

/// Draws panel `i` at head dim `d` from `y`: its heading and sides, the column ticks above
/// the tile and the row ticks left of it, the 8 warps' rectangles, and the followed warp
/// outlined. The group and the y below the tile.
fn draw_panel(mut g: Group, y: f64, i: usize, panel: Panel, d: u32) -> (Group, f64) {
    let x0 = panel_x(i);
    let left = x0 - TICK_ROOM;
    let (rows, cols) = panel.shape(d);
    let (row_words, col_words) = panel.sides();
    debug_assert!(
        panel.heading().chars().count() as f64 * HEADING_CHAR_W <= TICK_ROOM + PANEL_MAX + GAP,
        "{}: a heading wider than its panel",
        panel.heading()
    );
    g = g
        .add(text(left, y + 13.0, 13, panel.heading()).set("font-weight", "bold"))
        .add(
            text(
                left,
                y + 32.0,
                12,
                format!("{rows} {row_words} ↓ × {cols} {col_words} →"),
            )
            .set("fill", MUTED),
        );
    let top = y + 58.0;
    let tiles: Vec<WarpTile> = (0..WARPS).map(|w| panel.warp_tile(d, w)).collect();
    for c in boundaries(tiles.iter().map(|t| t.col0).collect(), cols) {
        g = g.add(
            text(
                x0 + f64::from(c) * PX_PER_ELEMENT,
                top - 6.0,
                12,
                c.to_string(),
            )
            .set("text-anchor", "middle")
            .set("fill", MUTED),
        );
    }
    for r in boundaries(tiles.iter().map(|t| t.row0).collect(), rows) {
        g = g.add(
            text(
                x0 - 4.0,
                top + f64::from(r) * PX_PER_ELEMENT + 4.0,
                12,
                r.to_string(),
            )
            .set("text-anchor", "end")
            .set("fill", MUTED),
        );
    }
    for w in 0..WARPS {
        g = g.add(warp_cell(x0, top, panel, d, w));
    }
    let f = tiles[FOLLOWED as usize];
    g = g.add(
        rect(
            x0 + f64::from(f.col0) * PX_PER_ELEMENT,
            top + f64::from(f.row0) * PX_PER_ELEMENT,
            f64::from(f.cols) * PX_PER_ELEMENT,
            f64::from(f.rows) * PX_PER_ELEMENT,
            "none",
        )
        .set("stroke", MARK)
        .set("stroke-width", 3.0),
    );
    (g, top + f64::from(rows) * PX_PER_ELEMENT)
}

/// `S 32, dP 32, dV 24, dK 24, dQ 32`.
fn ldmatrix_list(counts: [u32; 5]) -> String {
    let parts: Vec<String> = ["S", "dP", "dV", "dK", "dQ"]
        .iter()
        .zip(counts)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    parts.join(", ")
}

/// One head dim's row: its heading (the step, the warp grids, the loads), then the three
/// panels side by side. The group and the y below the row.
fn draw_row(mut g: Group, mut y: f64, d: u32) -> (Group, f64) {
    let (wm, wn, _) = warp_grid(d);
    let counts = ldmatrix_x4_per_product(d);
    let stage22 = if d == 128 {
        format!(" (stage 22: {})", STAGE22_LDMATRIX_D128.iter().sum::<u32>())
    } else {
        String::new()
    };
    (g, y) = paragraph(
        g,
        y,
        &[format!(
            "d = {d}: a step of BLOCK_Q = {} queries. S, dP and dQ in {wm} × {wn} warps (WM × WN), dV and dK in 4 × 2.",
            block_q(d)
        )],
        13,
        HEADING_CHAR_W,
        true,
    );
    (g, y) = paragraph(
        g,
        y,
        &[format!(
            "ldmatrix.x4 a warp and step: {} = {}{stage22}.",
            ldmatrix_list(counts),
            counts.iter().sum::<u32>(),
        )],
        12,
        CHAR_W_12,
        false,
    );
    let mut bottom = y;
    for (i, &panel) in Panel::ALL.iter().enumerate() {
        let b;
        (g, b) = draw_panel(g, y + 4.0, i, panel, d);
        bottom = bottom.max(b);
    }
    (g, bottom + 14.0)
}

/// `backward-warp-tiles.svg`: one step of stage 25's main kernel at d = 128 and at d = 64,
/// each product's result tile drawn to scale and split into the 8 warps' tiles, with the
/// notes on P and dS and on stage 22's tiles and loads.
pub fn warp_tiles_svg() -> String {
    for d in HEAD_DIMS {
        assert!(composes(d), "d = {d}: tiles whose shapes do not compose");
        for panel in Panel::ALL {
            assert!(
                owned_once(panel, d),
                "d = {d}, {}: an element not owned by exactly one warp",
                panel.heading()
            );
        }
    }
    let title = "Stage 25's warp tiles: who computes what, per step";
    let (mut g, mut y) = title_paragraph(title);
    (g, y) = paragraph(
        g,
        y,
        &[format!(
            "One block of stage 25's main kernel: BLOCK_KV = {BLOCK_KV} keys, {WARPS} warps, one step of BLOCK_Q queries. Each panel is a product's result tile, to scale, split into the {WARPS} warps' tiles of {WARP_ROWS} rows. A warp has the same colour in every panel; warp {FOLLOWED}, outlined, computes a different place in each product."
        )],
        12,
        CHAR_W_12,
        false,
    );
    for d in HEAD_DIMS {
        g = g.add(line(MARGIN, y, MAX_WIDTH - MARGIN, y, "#cccccc", 1.0));
        (g, y) = draw_row(g, y + 10.0, d);
    }
    g = g.add(line(MARGIN, y, MAX_WIDTH - MARGIN, y, "#cccccc", 1.0));
    let notes = [
        format!(
            "P and dS: stored to shared memory between the panels, one barrier. The S and dP warps write them with queries as rows (a BLOCK_Q × {BLOCK_KV} tile each); the dV and dK warps read them by key (ldmatrix.trans), the dQ warps read dS by query."
        ),
        format!(
            "Stage 22, for contrast: each warp owned {} keys (16w to 16w + 15) of S^T, dP^T, dV and dK, and dQ was 4 × 2 warps of 16 queries × d/2; at d = 128 a warp issued {} ldmatrix.x4 a step ({}) for the same {} mma.",
            BLOCK_KV / WARPS,
            STAGE22_LDMATRIX_D128.iter().sum::<u32>(),
            ldmatrix_list(STAGE22_LDMATRIX_D128),
            mma_per_step(128)
        ),
    ];
    (g, y) = paragraph(g, y + 6.0, &notes, 12, CHAR_W_12, false);
    document(MAX_WIDTH, (y + MARGIN).ceil(), title, g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tiles_are_stage_25s() {
        assert_eq!((WARPS, BLOCK_KV), (8, 128));
        assert_eq!((block_q(128), block_q(64)), (64, 128));
        assert_eq!(warp_grid(128), (2, 4, 32));
        assert_eq!(warp_grid(64), (4, 2, 64));
        for d in HEAD_DIMS {
            let (wm, wn, _) = warp_grid(d);
            assert_eq!(wm * wn, WARPS);
            // The kernel's static_assert: dQ's column slices are whole pairs of n8 tiles.
            assert_eq!(d / wn % 16, 0, "d = {d}");
        }
    }

    #[test]
    fn every_element_is_owned_by_exactly_one_warp() {
        for d in HEAD_DIMS {
            for panel in Panel::ALL {
                assert!(owned_once(panel, d), "d = {d}, {panel:?}");
                // The same by area: 8 tiles, disjoint, summing to the tile.
                let (rows, cols) = panel.shape(d);
                let area: u32 = (0..WARPS)
                    .map(|w| {
                        let t = panel.warp_tile(d, w);
                        t.rows * t.cols
                    })
                    .sum();
                assert_eq!(area, rows * cols, "d = {d}, {panel:?}");
            }
        }
    }

    #[test]
    fn the_tiles_shapes_compose() {
        for d in HEAD_DIMS {
            assert!(composes(d), "d = {d}");
            assert_eq!(Panel::SdP.shape(d), (block_q(d), 128));
            assert_eq!(Panel::DvDk.shape(d), (128, d));
            assert_eq!(Panel::Dq.shape(d), (block_q(d), d));
        }
    }

    #[test]
    fn warp_5_and_warp_3_where_the_kernel_puts_them() {
        let t = |row0, rows, col0, cols| WarpTile {
            row0,
            rows,
            col0,
            cols,
        };
        // d128: WM = 2, WN = 4, KEYS_W = 32.
        assert_eq!(s_warp_tile(128, 5), t(32, 32, 64, 32));
        assert_eq!(kv_warp_tile(128, 5), t(32, 32, 64, 64));
        assert_eq!(dq_warp_tile(128, 5), t(32, 32, 64, 32));
        // d64: WM = 4, WN = 2, KEYS_W = 64.
        assert_eq!(s_warp_tile(64, 5), t(32, 32, 64, 64));
        assert_eq!(kv_warp_tile(64, 5), t(32, 32, 32, 32));
        assert_eq!(dq_warp_tile(64, 5), t(32, 32, 32, 32));
        // The followed warp at d128: three different places.
        assert_eq!(s_warp_tile(128, FOLLOWED), t(32, 32, 32, 32));
        assert_eq!(kv_warp_tile(128, FOLLOWED), t(96, 32, 0, 64));
        assert_eq!(dq_warp_tile(128, FOLLOWED), t(32, 32, 32, 32));
    }

    #[test]
    fn the_loads_are_the_chapters() {
        // Chapter 25's table, d = 128: stage 25 144, stage 22 200, both 320 mma.
        assert_eq!(ldmatrix_x4_per_product(128), [32, 32, 24, 24, 32]);
        assert_eq!(ldmatrix_x4_per_product(128).iter().sum::<u32>(), 144);
        assert_eq!(STAGE22_LDMATRIX_D128.iter().sum::<u32>(), 200);
        assert_eq!(mma_per_step(128), 320);
        // d = 64: twice the queries a step, the same loads and mma a warp.
        assert_eq!(ldmatrix_x4_per_product(64), [24, 24, 32, 32, 32]);
        assert_eq!(mma_per_step(64), 320);
    }

    #[test]
    fn the_figure_fits_the_column_and_says_what_it_should() {
        let svg = warp_tiles_svg();
        let (width, smallest) = crate::figure_size::drawn_width_and_smallest_text(&svg).unwrap();
        assert_eq!(width, MAX_WIDTH);
        assert!(smallest >= 12.0, "{smallest}px text");
        assert!(GAP >= 12.0 && panel_x(2) + PANEL_MAX <= MAX_WIDTH - MARGIN + 1e-9);
        assert_eq!(
            svg.matches("<g class=\"cell\">").count(),
            HEAD_DIMS.len() * 3 * WARPS as usize
        );
        // The texts, joined across the lines they wrap to.
        let texts: Vec<&str> = svg
            .split('>')
            .filter_map(|s| s.split('<').next())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let texts = texts.join(" ");
        for note in [
            "P and dS: stored to shared memory between the panels, one barrier.",
            "ldmatrix.x4 a warp and step: S 32, dP 32, dV 24, dK 24, dQ 32 = 144 (stage 22: 200).",
            "ldmatrix.x4 a warp and step: S 24, dP 24, dV 32, dK 32, dQ 32 = 144.",
            "200 ldmatrix.x4 a step (S 48, dP 48, dV 32, dK 32, dQ 40) for the same 320 mma.",
            "d = 128, warp 5, S and dP: queries 32-63 × keys 64-95 (32 × 32)",
            "d = 128, warp 5, dV and dK: keys 32-63 × columns 64-127 (32 × 64)",
            "d = 128, warp 5, dQ: queries 32-63 × columns 64-95 (32 × 32)",
        ] {
            assert!(texts.contains(note), "{note}");
        }
    }
}
