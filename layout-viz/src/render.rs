//! SVG renderers: layout grids, swizzles, TV layouts, MMA atoms, ldmatrix and bank maps.
//!
//! Every figure is built from panels of cells. Each cell is one `<g class="cell">` holding
//! a `<title>` tooltip (coordinate, offset, bank, thread, value: whichever apply), its
//! background stripes (one per owner, so a cell with four owning threads shows all four)
//! and their labels. Output is deterministic: panels, cells and legends are laid out from
//! `Vec`s in order, and the svg crate writes attributes sorted by name.
//!
//! The renderers take plain data (offsets, atoms, bank reports), not the layout algebra,
//! so the CLI and the book decide what to evaluate and these functions only draw.
//!
//! Figures are drawn for the book's column ([`COLUMN_W`]) at 1:1, so their 10-11px text
//! reads as 10-11px: titles, captions and legends wrap to it; a bank map's 32 banks are
//! narrow cells under one label per lane; a TV atom too wide on one line stacks `T` over
//! `V` or labels runs of a thread's values; what still cannot fit (a 64x64 accumulator,
//! an element-by-element 8x64 swizzle) has a readable view beside it: a window of the
//! atom ([`tv_window`]) or the tile by 16-byte chunks ([`swizzle_chunks`]).

use svg::Document;
use svg::node::element::{Circle, Group, Polyline, Rectangle, Text, Title};

use std::ops::Range;

use crate::atoms::{Ldmatrix, MmaAtom, TmaBox, TvAtom};
use crate::bank::{self, Access, BankReport};
use crate::figure_size::{TooLarge, check_cells};
use crate::svg_kit::{self, wrap};

/// Fill colors: 16 light, mutually distinguishable tones (after the Tableau 20 light
/// set), all readable under dark text.
pub const PALETTE: [&str; 16] = [
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d",
    "#9edae5", "#e0e0e0", "#7fb2e5", "#ffd92f", "#b3de69", "#fccde5", "#bebada", "#8dd3c7",
];
/// Cells that nothing touches.
const EMPTY_FILL: &str = "#f7f7f7";
/// Conflicts and other warnings.
const ALERT: &str = "#d62728";
const INK: &str = "#222222";
const MUTED: &str = "#777777";
const FONT: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";

/// The advance of one character of the monospace font: cell labels are 11px, row and
/// column headers 10px, legends 12px, captions 13px, panel captions 13px bold, the title
/// 17px bold (DejaVu Sans Mono advances 0.602 em; the larger sizes keep some slack).
const CHAR_W: f64 = svg_kit::CHAR_W_11;
const HEAD_CHAR_W: f64 = 6.1;
const LEGEND_CHAR_W: f64 = svg_kit::CHAR_W_12;
const CAPTION_CHAR_W: f64 = 8.0;
const PANEL_CAPTION_CHAR_W: f64 = 8.2;
const TITLE_CHAR_W: f64 = 10.5;
const LINE_H: f64 = 16.0;
const CELL_PAD: f64 = 8.0;
/// Two-line labels (`T31` over `V7`) are what make the widest atoms fit the column: a
/// narrower pad keeps them there.
const STACKED_PAD: f64 = 4.0;
const PANEL_GAP: f64 = 36.0;
const MARGIN: f64 = 20.0;
const HEADER: f64 = 28.0;
/// The width the book's figures are drawn for (its text column): titles, captions and
/// legends wrap to it, and the figures whose cells would not fit draw fewer cells (a
/// crop, a chunk view) or narrower ones whose labels span runs of cells.
pub const COLUMN_W: f64 = svg_kit::MAX_WIDTH;

/// The palette entry for an index (threads, banks, chunks).
pub fn color(i: u64) -> &'static str {
    PALETTE[(i % PALETTE.len() as u64) as usize]
}

/// One owner's band of a cell: its label and fill.
#[derive(Debug, Clone, PartialEq)]
pub struct Stripe {
    pub text: String,
    pub fill: String,
}

/// One cell of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Bands from top to bottom; empty = an untouched cell.
    pub stripes: Vec<Stripe>,
    pub tooltip: String,
    /// Drawn with a thick red border (a bank conflict, say).
    pub alert: bool,
    /// How many cells, this one and those right of it, its labels are centred across: 1
    /// for its own; more for a run one label names (a lane's 16 bytes in a bank map, a
    /// thread's 8 elements of a copy); 0 for a cell whose label a cell left of it draws.
    pub span: u32,
}

impl Cell {
    fn single(text: impl Into<String>, fill: &str, tooltip: impl Into<String>) -> Cell {
        Cell {
            stripes: vec![Stripe {
                text: text.into(),
                fill: fill.to_string(),
            }],
            tooltip: tooltip.into(),
            alert: false,
            span: 1,
        }
    }

    fn empty(tooltip: impl Into<String>) -> Cell {
        Cell {
            stripes: Vec::new(),
            tooltip: tooltip.into(),
            alert: false,
            span: 1,
        }
    }
}

/// A rows x cols grid of cells with a caption, optional row/column headers and an
/// optional path through cell centres.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub caption: String,
    pub rows: u32,
    pub cols: u32,
    /// Row-major.
    pub cells: Vec<Cell>,
    pub row_labels: Vec<String>,
    pub col_labels: Vec<String>,
    pub path: Vec<(u32, u32)>,
    /// Cells this wide whatever their labels (labels that span runs of cells).
    pub cell_w: Option<f64>,
}

impl Panel {
    fn new(caption: impl Into<String>, rows: u32, cols: u32, cells: Vec<Cell>) -> Panel {
        debug_assert_eq!(cells.len(), (rows * cols) as usize);
        Panel {
            caption: caption.into(),
            rows,
            cols,
            cells,
            row_labels: (0..rows).map(|r| r.to_string()).collect(),
            col_labels: (0..cols).map(|c| c.to_string()).collect(),
            path: Vec::new(),
            cell_w: None,
        }
    }

    /// The lines one stripe's label is drawn in: a label with a newline (`T31` over `V7`)
    /// takes half the width and twice the height.
    fn label_lines<'a>(&self, text: &'a str) -> Vec<&'a str> {
        text.split('\n').collect()
    }

    fn stacked(&self) -> bool {
        self.cells
            .iter()
            .flat_map(|c| c.stripes.iter())
            .any(|s| s.text.contains('\n'))
    }

    fn lines(&self) -> usize {
        self.cells
            .iter()
            .map(|c| {
                c.stripes
                    .iter()
                    .map(|s| self.label_lines(&s.text).len())
                    .sum::<usize>()
            })
            .max()
            .unwrap_or(1)
            .max(1)
    }

    fn cell_w(&self) -> f64 {
        if let Some(w) = self.cell_w {
            return w;
        }
        let chars = self
            .cells
            .iter()
            .flat_map(|c| c.stripes.iter())
            .flat_map(|s| self.label_lines(&s.text))
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        let pad = if self.stacked() {
            STACKED_PAD
        } else {
            CELL_PAD
        };
        (chars as f64 * CHAR_W + pad).max(22.0)
    }

    fn cell_h(&self) -> f64 {
        self.lines() as f64 * LINE_H + 6.0
    }

    fn label_w(&self) -> f64 {
        self.row_labels
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0) as f64
            * HEAD_CHAR_W
            + 8.0
    }

    fn grid_w(&self) -> f64 {
        self.label_w() + self.cols as f64 * self.cell_w()
    }

    /// The panel's caption in lines no wider than its grid (at least 24 characters).
    fn caption_lines(&self) -> Vec<String> {
        let chars = ((self.grid_w() / PANEL_CAPTION_CHAR_W) as usize).max(24);
        wrap(&self.caption, chars)
    }

    fn width(&self) -> f64 {
        let caption = self
            .caption_lines()
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0) as f64
            * PANEL_CAPTION_CHAR_W;
        self.grid_w().max(caption)
    }

    fn header(&self) -> f64 {
        HEADER + LINE_H * (self.caption_lines().len().max(1) - 1) as f64
    }

    fn height(&self) -> f64 {
        self.header() + LINE_H + self.rows as f64 * self.cell_h()
    }
}

/// A figure: a title, panels placed in a grid of slots, a legend and caption lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: String,
    /// (slot column, slot row, panel).
    pub panels: Vec<(u32, u32, Panel)>,
    pub legend: Vec<(String, String)>,
    pub caption: Vec<String>,
}

fn text(x: f64, y: f64, size: f64, content: impl Into<String>) -> Text {
    Text::new(content.into())
        .set("x", fmt(x))
        .set("y", fmt(y))
        .set("font-size", fmt(size))
        .set("font-family", FONT)
        .set("fill", INK)
}

/// Coordinates with at most two decimals, so the output does not depend on float noise.
fn fmt(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Figure {
    /// The SVG document.
    pub fn to_svg(&self) -> String {
        let slot_cols = self.panels.iter().map(|p| p.0 + 1).max().unwrap_or(0) as usize;
        let slot_rows = self.panels.iter().map(|p| p.1 + 1).max().unwrap_or(0) as usize;
        let mut col_w = vec![0.0f64; slot_cols];
        let mut row_h = vec![0.0f64; slot_rows];
        for (c, r, p) in &self.panels {
            col_w[*c as usize] = col_w[*c as usize].max(p.width());
            row_h[*r as usize] = row_h[*r as usize].max(p.height());
        }
        let col_x: Vec<f64> = col_w
            .iter()
            .scan(MARGIN, |x, w| {
                let at = *x;
                *x += w + PANEL_GAP;
                Some(at)
            })
            .collect();
        let panels_w: f64 =
            col_w.iter().sum::<f64>() + PANEL_GAP * (slot_cols.saturating_sub(1)) as f64;
        // Title, legend and caption wrap to the wider of the panels and the column.
        let text_w = panels_w.max(COLUMN_W - 2.0 * MARGIN);
        let title_lines = wrap(&self.title, (text_w / TITLE_CHAR_W) as usize);
        let top = MARGIN + 30.0 + 22.0 * (title_lines.len().max(1) - 1) as f64;
        let row_y: Vec<f64> = row_h
            .iter()
            .scan(top, |y, h| {
                let at = *y;
                *y += h + PANEL_GAP;
                Some(at)
            })
            .collect();

        let mut body = Group::new();
        for (c, r, panel) in &self.panels {
            // Top-left alignment in a slot is enough to line up MMA operands cell by
            // cell: A and C share a slot row, B and C a slot column, and their cells
            // have the same size (same label lengths).
            body = body.add(draw_panel(panel, col_x[*c as usize], row_y[*r as usize]));
        }
        let panels_h: f64 =
            row_h.iter().sum::<f64>() + PANEL_GAP * (slot_rows.saturating_sub(1)) as f64;
        let mut y = top + panels_h + 12.0;

        let mut legend = Group::new().set("class", "legend");
        let mut legend_w = 0.0f64;
        if !self.legend.is_empty() {
            let mut x = MARGIN;
            for (fill, label) in &self.legend {
                let w = 20.0 + label.chars().count() as f64 * LEGEND_CHAR_W + 18.0;
                if x > MARGIN && x + w - 18.0 > MARGIN + text_w {
                    x = MARGIN;
                    y += 22.0;
                }
                legend = legend
                    .add(
                        Rectangle::new()
                            .set("x", fmt(x))
                            .set("y", fmt(y))
                            .set("width", 14)
                            .set("height", 14)
                            .set("fill", fill.as_str())
                            .set("stroke", INK)
                            .set("stroke-width", 0.5),
                    )
                    .add(text(x + 20.0, y + 11.5, 12.0, label.as_str()));
                x += w;
                legend_w = legend_w.max(x - 18.0 - MARGIN);
            }
            y += 30.0;
        }
        let mut caption = Group::new().set("class", "caption");
        let caption_lines: Vec<String> = self
            .caption
            .iter()
            .flat_map(|l| wrap(l, (text_w / CAPTION_CHAR_W) as usize))
            .collect();
        for line in &caption_lines {
            caption = caption.add(text(MARGIN, y + 12.0, 13.0, line.as_str()));
            y += 20.0;
        }
        let chars =
            |lines: &[String]| lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
        let text_used = (chars(&caption_lines) * CAPTION_CHAR_W)
            .max(chars(&title_lines) * TITLE_CHAR_W)
            .max(legend_w);
        let width = (MARGIN * 2.0 + panels_w.max(text_used)).max(640.0).ceil();
        let height = (y + MARGIN).ceil();
        let mut title = Group::new().set("class", "title");
        for (i, line) in title_lines.iter().enumerate() {
            title = title.add(
                text(MARGIN, MARGIN + 12.0 + 22.0 * i as f64, 17.0, line.as_str())
                    .set("font-weight", "bold"),
            );
        }

        Document::new()
            .set("viewBox", (0, 0, width, height))
            .set("width", width)
            .set("height", height)
            .add(Title::new(self.title.as_str()))
            .add(
                Rectangle::new()
                    .set("width", "100%")
                    .set("height", "100%")
                    .set("fill", "#ffffff"),
            )
            .add(title)
            .add(body)
            .add(legend)
            .add(caption)
            .to_string()
            + "\n"
    }
}

fn draw_panel(p: &Panel, x0: f64, y0: f64) -> Group {
    let (cw, ch, lw) = (p.cell_w(), p.cell_h(), p.label_w());
    let gx = x0 + lw;
    let gy = y0 + p.header() + LINE_H;
    let mut g = Group::new().set("class", "panel");
    for (i, line) in p.caption_lines().iter().enumerate() {
        g = g.add(
            text(x0, y0 + 14.0 + LINE_H * i as f64, 13.0, line.as_str()).set("font-weight", "bold"),
        );
    }
    for (c, label) in p.col_labels.iter().enumerate() {
        g = g.add(
            text(gx + (c as f64 + 0.5) * cw, gy - 5.0, 10.0, label.as_str())
                .set("text-anchor", "middle")
                .set("fill", MUTED),
        );
    }
    for (r, label) in p.row_labels.iter().enumerate() {
        g = g.add(
            text(
                gx - 4.0,
                gy + (r as f64 + 0.5) * ch + 3.5,
                10.0,
                label.as_str(),
            )
            .set("text-anchor", "end")
            .set("fill", MUTED),
        );
    }
    for r in 0..p.rows {
        for c in 0..p.cols {
            let cell = &p.cells[(r * p.cols + c) as usize];
            g = g.add(draw_cell(
                p,
                cell,
                gx + c as f64 * cw,
                gy + r as f64 * ch,
                cw,
                ch,
            ));
        }
    }
    // Labels that span runs of cells go over all of them.
    for r in 0..p.rows {
        for c in 0..p.cols {
            let cell = &p.cells[(r * p.cols + c) as usize];
            if cell.span > 1 {
                let (x, y) = (gx + c as f64 * cw, gy + r as f64 * ch);
                g = draw_labels(p, g, cell, x, y, cw, ch);
            }
        }
    }
    if !p.path.is_empty() {
        let centre =
            |&(r, c): &(u32, u32)| (gx + (c as f64 + 0.5) * cw, gy + (r as f64 + 0.5) * ch);
        let points: Vec<String> = p
            .path
            .iter()
            .map(centre)
            .map(|(x, y)| format!("{},{}", fmt(x), fmt(y)))
            .collect();
        let (sx, sy) = centre(&p.path[0]);
        g = g
            .add(
                Polyline::new()
                    .set("class", "path")
                    .set("points", points.join(" "))
                    .set("fill", "none")
                    .set("stroke", ALERT)
                    .set("stroke-width", 1.5)
                    .set("stroke-opacity", 0.75),
            )
            .add(
                Circle::new()
                    .set("cx", fmt(sx))
                    .set("cy", fmt(sy))
                    .set("r", 3.5)
                    .set("fill", ALERT),
            );
    }
    g
}

/// A cell's labels, one stripe's in each band, centred across the `cell.span` cells from
/// `x`. A label across several cells is drawn over their borders, on a patch of its
/// band's colour.
fn draw_labels(p: &Panel, mut g: Group, cell: &Cell, x: f64, y: f64, w: f64, h: f64) -> Group {
    let n = cell.stripes.len().max(1) as f64;
    let label_x = x + w * f64::from(cell.span) / 2.0;
    for (i, s) in cell.stripes.iter().enumerate() {
        let sy = y + h * i as f64 / n;
        let lines = p.label_lines(&s.text);
        let first = sy + h / n / 2.0 + 4.0 - LINE_H * (lines.len() - 1) as f64 / 2.0;
        for (j, line) in lines.iter().enumerate() {
            let baseline = first + LINE_H * j as f64;
            if cell.span > 1 {
                let w = line.chars().count() as f64 * CHAR_W + 4.0;
                g = g.add(
                    Rectangle::new()
                        .set("x", fmt(label_x - w / 2.0))
                        .set("y", fmt(baseline - 11.0))
                        .set("width", fmt(w))
                        .set("height", 14)
                        .set("fill", s.fill.as_str()),
                );
            }
            g = g.add(text(label_x, baseline, 11.0, *line).set("text-anchor", "middle"));
        }
    }
    g
}

fn draw_cell(p: &Panel, cell: &Cell, x: f64, y: f64, w: f64, h: f64) -> Group {
    let mut g = Group::new()
        .set("class", "cell")
        .add(Title::new(cell.tooltip.as_str()));
    if cell.stripes.is_empty() {
        g = g.add(
            Rectangle::new()
                .set("x", fmt(x))
                .set("y", fmt(y))
                .set("width", fmt(w))
                .set("height", fmt(h))
                .set("fill", EMPTY_FILL),
        );
    }
    let n = cell.stripes.len().max(1) as f64;
    for (i, s) in cell.stripes.iter().enumerate() {
        let sy = y + h * i as f64 / n;
        g = g.add(
            Rectangle::new()
                .set("x", fmt(x))
                .set("y", fmt(sy))
                .set("width", fmt(w))
                .set("height", fmt(h / n))
                .set("fill", s.fill.as_str()),
        );
    }
    if cell.span == 1 {
        g = draw_labels(p, g, cell, x, y, w, h);
    }
    let border = Rectangle::new()
        .set("x", fmt(x))
        .set("y", fmt(y))
        .set("width", fmt(w))
        .set("height", fmt(h))
        .set("fill", "none");
    g.add(if cell.alert {
        border.set("stroke", ALERT).set("stroke-width", 2.5)
    } else {
        border.set("stroke", "#555555").set("stroke-width", 0.6)
    })
}

/// A layout to draw as a grid: `offsets[r * cols + c]` for the cell at (r, c), which is
/// colexicographic index `r + rows * c` (one row: index `c`), with its coordinate spelled
/// as the layout's shape has it.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutGrid {
    pub notation: String,
    pub rows: u32,
    pub cols: u32,
    pub offsets: Vec<i64>,
    pub coords: Vec<String>,
    /// The whole grid's rows and columns when this is its top-left window ([`window`]).
    pub of: Option<(u32, u32)>,
}

impl LayoutGrid {
    /// The top-left `rows x cols` of the grid (each at most the grid's), its cells as
    /// they are in the whole one: the same coordinates, indices and offsets.
    pub fn window(&self, rows: u32, cols: u32) -> LayoutGrid {
        let (rows, cols) = (
            rows.clamp(1, self.rows.max(1)),
            cols.clamp(1, self.cols.max(1)),
        );
        if (rows, cols) == (self.rows, self.cols) {
            return self.clone();
        }
        let pick = |v: &[_]| -> Vec<_> {
            (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (r * self.cols + c) as usize))
                .map(|k| v[k])
                .collect()
        };
        LayoutGrid {
            notation: self.notation.clone(),
            rows,
            cols,
            offsets: pick(&self.offsets),
            coords: (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (r * self.cols + c) as usize))
                .map(|k| self.coords[k].clone())
                .collect(),
            of: Some(self.of.unwrap_or((self.rows, self.cols))),
        }
    }

    /// The window of at most `cells` cells to draw of this grid, near square, whole rows
    /// when they fit: None when the whole grid has no more.
    pub fn window_within(&self, cells: u64) -> Option<(u32, u32)> {
        window_within(self.rows, self.cols, cells)
    }
}

/// The window of at most `cells` cells to draw of a `rows x cols` grid, near square,
/// whole rows when they fit: None when the whole grid has no more.
pub fn window_within(rows: u32, cols: u32, cells: u64) -> Option<(u32, u32)> {
    {
        let (rows, cols) = (u64::from(rows), u64::from(cols));
        if rows * cols <= cells {
            return None;
        }
        let side = (cells as f64).sqrt().floor() as u64;
        let c = if cols <= cells / side.min(rows).max(1) {
            cols
        } else {
            side.min(cols).max(1)
        };
        let r = (cells / c).min(rows).max(1);
        let c = (cells / r).min(cols).max(1);
        Some((r as u32, c as u32))
    }
}

/// What a caption says of a window: which part of the whole grid is drawn.
fn window_note(grid: &LayoutGrid) -> Option<String> {
    let (rows, cols) = grid.of?;
    Some(format!(
        "Rows 0-{} of {rows} and columns 0-{} of {cols}: the top-left {} of {} cells (--window {},{}).",
        grid.rows - 1,
        grid.cols - 1,
        grid.rows * grid.cols,
        u64::from(rows) * u64::from(cols),
        grid.rows,
        grid.cols
    ))
}

/// A layout's offsets as a grid, colored by offset mod 8; `path` draws the walk through
/// colexicographic indices 0, 1, 2, ...
pub fn layout(grid: &LayoutGrid, path: bool) -> String {
    let cells = (0..grid.rows * grid.cols)
        .map(|k| {
            let (r, c) = (k / grid.cols, k % grid.cols);
            let off = grid.offsets[k as usize];
            let index = r + grid.of.map_or(grid.rows, |(rows, _)| rows) * c;
            Cell::single(
                off.to_string(),
                color(off.rem_euclid(8) as u64),
                format!(
                    "cell ({r},{c}) coord {} index {index} -> offset {off}",
                    grid.coords[k as usize]
                ),
            )
        })
        .collect();
    let mut panel = Panel::new(grid.notation.clone(), grid.rows, grid.cols, cells);
    if path {
        let mut order: Vec<(u32, u32)> = (0..grid.rows * grid.cols)
            .map(|i| (i % grid.rows, i / grid.rows))
            .collect();
        if grid.rows == 1 {
            order = (0..grid.cols).map(|c| (0, c)).collect();
        }
        panel.path = order;
    }
    Figure {
        title: format!("Layout {}", grid.notation),
        panels: vec![(0, 0, panel)],
        legend: (0..8).map(|i| (color(i).to_string(), format!("offset = {i} mod 8"))).collect(),
        caption: [if path {
            "Each cell shows the offset its coordinate maps to; the line walks indices 0, 1, 2, ... (colexicographic: the first mode fastest).".to_string()
        } else {
            "Each cell shows the offset its coordinate maps to.".to_string()
        }]
        .into_iter()
        .chain(window_note(grid))
        .collect(),
    }
    .to_svg()
}

/// The 16-byte chunk of a row an element offset falls in, mod 8: with 128-byte rows, the
/// group of 4 banks it occupies.
fn chunk(offset: i64, elem_bytes: u32) -> u64 {
    (offset * i64::from(elem_bytes) / 16).rem_euclid(8) as u64
}

/// A layout before and after a swizzle, side by side over the same logical cells, each
/// colored by the 16-byte chunk its offset lands in, so the permutation is visible.
pub fn swizzle(before: &LayoutGrid, after: &LayoutGrid, elem_bytes: u32) -> String {
    let panel = |grid: &LayoutGrid, caption: String, other: &LayoutGrid, is_after: bool| {
        let cells = (0..grid.rows * grid.cols)
            .map(|k| {
                let (r, c) = (k / grid.cols, k % grid.cols);
                let off = grid.offsets[k as usize];
                let (from, to) = if is_after { (other.offsets[k as usize], off) } else { (off, other.offsets[k as usize]) };
                let byte = off * i64::from(elem_bytes);
                Cell::single(
                    off.to_string(),
                    color(chunk(off, elem_bytes)),
                    format!(
                        "cell ({r},{c}) coord {}: offset {from} -> swizzled {to}; here offset {off}, chunk {}, bank {}",
                        grid.coords[k as usize],
                        chunk(off, elem_bytes),
                        bank::bank_of(byte.max(0) as u64)
                    ),
                )
            })
            .collect();
        Panel::new(caption, grid.rows, grid.cols, cells)
    };
    Figure {
        title: format!("{}  vs  {}", before.notation, after.notation),
        panels: vec![
            (0, 0, panel(before, format!("before: {}", before.notation), after, false)),
            (1, 0, panel(after, format!("after: {}", after.notation), before, true)),
        ],
        legend: (0..8)
            .map(|i| (color(i).to_string(), format!("16-byte chunk {i} (banks {}-{})", 4 * i, 4 * i + 3)))
            .collect(),
        caption: [format!(
            "Same logical cells in both grids; color = 16-byte chunk of the offset ({elem_bytes}-byte elements, 128-byte rows)."
        )]
        .into_iter()
        .chain(window_note(before))
        .collect(),
    }
    .to_svg()
}

/// `grid` by 16-byte chunks: each run of `16 / elem_bytes` columns as one cell holding
/// its first offset, provided every run holds consecutive offsets (a chunk moves whole,
/// as 16-byte copies and `ldmatrix` rows need); None otherwise, for then a chunk view
/// would hide what moves. Coordinates become the first and last of the run.
pub fn chunk_grid(grid: &LayoutGrid, elem_bytes: u32) -> Option<LayoutGrid> {
    let group = 16 / elem_bytes.clamp(1, 16);
    if group < 2 || grid.cols % group != 0 {
        return None;
    }
    let cols = grid.cols / group;
    let mut offsets = Vec::new();
    let mut coords = Vec::new();
    for r in 0..grid.rows {
        for k in 0..cols {
            let at = |i: u32| (r * grid.cols + k * group + i) as usize;
            let first = grid.offsets[at(0)];
            if (0..group).any(|i| grid.offsets[at(i)] != first + i64::from(i)) {
                return None;
            }
            offsets.push(first);
            coords.push(format!(
                "{}..{}",
                grid.coords[at(0)],
                grid.coords[at(group - 1)]
            ));
        }
    }
    Some(LayoutGrid {
        notation: grid.notation.clone(),
        rows: grid.rows,
        cols,
        offsets,
        coords,
        of: None,
    })
}

/// A panel of a chunk grid: each cell is a 16-byte chunk labelled by its first offset and
/// coloured by where it lands in the row (`tip` adds what the figure compares).
fn chunk_panel(
    grid: &LayoutGrid,
    caption: String,
    elem_bytes: u32,
    tip: impl Fn(usize) -> String,
) -> Panel {
    let per = i64::from(16 / elem_bytes);
    let cells = (0..grid.rows * grid.cols)
        .map(|k| {
            let (r, c) = (k / grid.cols, k % grid.cols);
            let off = grid.offsets[k as usize];
            let byte = (off * i64::from(elem_bytes)).max(0) as u64;
            Cell::single(
                off.to_string(),
                color(chunk(off, elem_bytes)),
                format!(
                    "row {r}, chunk {c} = coords {}: offsets {off}-{}, chunk {} of its 128-byte line, banks {}-{}{}",
                    grid.coords[k as usize],
                    off + per - 1,
                    chunk(off, elem_bytes),
                    bank::bank_of(byte),
                    bank::bank_of(byte) + 3,
                    tip(k as usize)
                ),
            )
        })
        .collect();
    let mut p = Panel::new(caption, grid.rows, grid.cols, cells);
    p.col_labels = (0..grid.cols).map(|c| format!("c{c}")).collect();
    p
}

fn chunk_legend() -> Vec<(String, String)> {
    (0..8)
        .map(|i| {
            (
                color(i).to_string(),
                format!("16-byte chunk {i} (banks {}-{})", 4 * i, 4 * i + 3),
            )
        })
        .collect()
}

fn chunk_caption(elem_bytes: u32) -> String {
    let per = 16 / elem_bytes;
    format!(
        "One cell per 16-byte chunk: {per} {elem_bytes}-byte elements (columns {per}c to {per}c+{}) at consecutive offsets, labelled by the first; the whole figure shows every element.",
        per - 1
    )
}

/// [`layout`] by 16-byte chunks (see [`chunk_grid`]): a wide row-major tile at a size the
/// column can show. None where a chunk's offsets are not consecutive.
pub fn layout_chunks(grid: &LayoutGrid, elem_bytes: u32) -> Option<String> {
    layout_chunks_window(grid, elem_bytes, |_| None)
}

/// [`layout_chunks`] drawing the window `window` picks of the chunk grid (rows, columns
/// of chunks), all of it where it picks None.
pub fn layout_chunks_window(
    grid: &LayoutGrid,
    elem_bytes: u32,
    window: impl Fn(&LayoutGrid) -> Option<(u32, u32)>,
) -> Option<String> {
    let chunks = chunk_grid(grid, elem_bytes)?;
    let chunks = match window(&chunks) {
        Some((r, c)) => chunks.window(r, c),
        None => chunks,
    };
    Some(
        Figure {
            title: format!("Layout {}, by 16-byte chunks", grid.notation),
            panels: vec![(
                0,
                0,
                chunk_panel(&chunks, grid.notation.clone(), elem_bytes, |_| {
                    String::new()
                }),
            )],
            legend: chunk_legend(),
            caption: [chunk_caption(elem_bytes)]
                .into_iter()
                .chain(window_note(&chunks))
                .collect(),
        }
        .to_svg(),
    )
}

/// [`swizzle`] by 16-byte chunks: the permutation the swizzle is, each row's chunks, at
/// a size the column can show. None where a chunk's offsets are not consecutive before
/// or after (a swizzle whose base is below the chunk moves parts of chunks).
pub fn swizzle_chunks(before: &LayoutGrid, after: &LayoutGrid, elem_bytes: u32) -> Option<String> {
    swizzle_chunks_window(before, after, elem_bytes, |_| None)
}

/// [`swizzle_chunks`] drawing, in each grid, the window `window` picks of the chunk grid.
pub fn swizzle_chunks_window(
    before: &LayoutGrid,
    after: &LayoutGrid,
    elem_bytes: u32,
    window: impl Fn(&LayoutGrid) -> Option<(u32, u32)>,
) -> Option<String> {
    let (b, a) = (
        chunk_grid(before, elem_bytes)?,
        chunk_grid(after, elem_bytes)?,
    );
    let (b, a) = match window(&b) {
        Some((r, c)) => (b.window(r, c), a.window(r, c)),
        None => (b, a),
    };
    Some(
        Figure {
            title: format!("{}  vs  {}, by 16-byte chunks", before.notation, after.notation),
            panels: vec![
                (0, 0, chunk_panel(&b, format!("before: {}", before.notation), elem_bytes, |k| format!("; swizzled to {}", a.offsets[k]))),
                (1, 0, chunk_panel(&a, format!("after: {}", after.notation), elem_bytes, |k| format!("; unswizzled {}", b.offsets[k]))),
            ],
            legend: chunk_legend(),
            caption: [
                "Same logical chunks in both grids; color = the 16-byte chunk of its 128-byte line (four banks) each lands in.".to_string(),
                chunk_caption(elem_bytes),
            ]
            .into_iter()
            .chain(window_note(&b))
            .collect(),
        }
        .to_svg(),
    )
}

/// How a TV panel labels its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TvLabels {
    /// `T5V3` in each cell, one band per owner.
    Plain,
    /// `T5` over `V3`: half as wide, for atoms whose rows would not fit the column.
    Stacked,
    /// One label per run of cells a thread holds with consecutive values (`T5 V0-7`,
    /// a 16-byte copy), over narrow cells: for wide tiles of copies.
    Runs,
}

/// One panel of a TV atom over the cells `rows` x `cols` (all of them, or a crop): each
/// cell lists every (thread, value) that holds it; headers keep the atom's coordinates.
fn tv_panel(
    atom: &TvAtom,
    caption: String,
    rows: Range<u32>,
    cols: Range<u32>,
    labels: TvLabels,
) -> Panel {
    let (rn, cn) = atom.operand.axes();
    let owners = atom.owners();
    let owners_at = |r: u32, c: u32| &owners[(r * atom.cols + c) as usize];
    // The run a single-owner cell starts: how many cells right of it the same thread
    // holds with the next values.
    let single = |r: u32, c: u32| match owners_at(r, c).as_slice() {
        [one] => Some(*one),
        _ => None,
    };
    let run_from = |r: u32, c: u32| -> u32 {
        let Some((t, v)) = single(r, c) else { return 1 };
        (1..)
            .take_while(|&k| c + k < cols.end && single(r, c + k) == Some((t, v + k)))
            .count() as u32
            + 1
    };
    let continues_run = |r: u32, c: u32| {
        c > cols.start
            && matches!((single(r, c - 1), single(r, c)), (Some((t0, v0)), Some((t1, v1))) if t0 == t1 && v1 == v0 + 1)
    };
    let mut widest_run_label = 0.0f64;
    let mut cells = Vec::new();
    for r in rows.clone() {
        for c in cols.clone() {
            let who = owners_at(r, c);
            let list: Vec<String> = who.iter().map(|(t, v)| format!("T{t}V{v}")).collect();
            let tooltip = if who.is_empty() {
                format!("{rn}={r} {cn}={c}: no owner")
            } else {
                format!("{rn}={r} {cn}={c}: {}", list.join(", "))
            };
            let band = |t: u32, text: String| Stripe {
                text,
                fill: color(u64::from(t)).to_string(),
            };
            let cell = match labels {
                TvLabels::Runs if single(r, c).is_some() => {
                    let (t, v) = single(r, c).unwrap_or_default();
                    if continues_run(r, c) {
                        Cell {
                            stripes: vec![band(t, String::new())],
                            tooltip,
                            alert: false,
                            span: 0,
                        }
                    } else {
                        let run = run_from(r, c);
                        let text = if run > 1 {
                            format!("T{t} V{v}-{}", v + run - 1)
                        } else {
                            format!("T{t}V{v}")
                        };
                        widest_run_label = widest_run_label
                            .max((text.chars().count() as f64 * CHAR_W + 6.0) / f64::from(run));
                        Cell {
                            stripes: vec![band(t, text)],
                            tooltip,
                            alert: false,
                            span: run,
                        }
                    }
                }
                _ => Cell {
                    stripes: who
                        .iter()
                        .map(|&(t, v)| {
                            band(
                                t,
                                if labels == TvLabels::Stacked {
                                    format!("T{t}\nV{v}")
                                } else {
                                    format!("T{t}V{v}")
                                },
                            )
                        })
                        .collect(),
                    tooltip,
                    alert: false,
                    span: 1,
                },
            };
            cells.push(cell);
        }
    }
    let (n_rows, n_cols) = (rows.len() as u32, cols.len() as u32);
    let mut p = Panel::new(caption, n_rows, n_cols, cells);
    p.row_labels = rows.map(|r| format!("{rn}{r}")).collect();
    p.col_labels = cols.clone().map(|c| format!("{cn}{c}")).collect();
    if labels == TvLabels::Runs {
        // Narrow cells: as narrow as the run labels allow, the columns named every 8.
        p.cell_w = Some(widest_run_label.max(10.0).ceil());
        for (i, (c, l)) in cols.zip(p.col_labels.iter_mut()).enumerate() {
            if c % 8 != 0 && i != 0 {
                l.clear();
            }
        }
    }
    p
}

fn thread_legend(threads: u32) -> Vec<(String, String)> {
    let n = threads.min(PALETTE.len() as u32);
    (0..n)
        .map(|t| {
            // Colors repeat every 16 threads; the labels in the cells tell them apart.
            let p = PALETTE.len() as u32;
            let label = match threads {
                t_ if t_ <= p => format!("T{t}"),
                t_ if t_ <= 2 * p => format!("T{t}, T{}", t + p),
                _ => format!("T{t}, T{}, ...", t + p),
            };
            (color(u64::from(t)).to_string(), label)
        })
        .collect()
}

/// Whether panels `width` wide, side by side, fit the book's column.
fn fits_column(width: f64) -> bool {
    MARGIN * 2.0 + width <= COLUMN_W
}

/// A TV panel labelled the first way that fits the column: plain, stacked, runs; else
/// plain (too wide: the caller crops it, or the book scrolls it).
fn tv_panel_fitted(atom: &TvAtom, caption: &str, rows: Range<u32>, cols: Range<u32>) -> Panel {
    let plain = tv_panel(
        atom,
        caption.to_string(),
        rows.clone(),
        cols.clone(),
        TvLabels::Plain,
    );
    if fits_column(plain.width()) {
        return plain;
    }
    for labels in [TvLabels::Stacked, TvLabels::Runs] {
        let p = tv_panel(
            atom,
            caption.to_string(),
            rows.clone(),
            cols.clone(),
            labels,
        );
        if fits_column(p.width()) {
            return p;
        }
    }
    plain
}

/// A TV layout: every owner of every cell, colored by thread.
pub fn tv(atom: &TvAtom) -> String {
    tv_window(atom, 0..atom.rows, 0..atom.cols)
}

/// The cells `rows` x `cols` of a TV layout (clamped to the atom), for an atom too large
/// to read whole at the book's width: one warp's rows, one n-block's columns. Headers and
/// tooltips keep the atom's own coordinates; the caption says what part this is.
pub fn tv_window(atom: &TvAtom, rows: Range<u32>, cols: Range<u32>) -> String {
    let rows = rows.start.min(atom.rows)..rows.end.min(atom.rows);
    let cols = cols.start.min(atom.cols)..cols.end.min(atom.cols);
    let whole = rows == (0..atom.rows) && cols == (0..atom.cols);
    let shared = atom.owners().iter().any(|o| o.len() > 1);
    let mut caption = vec![format!(
        "{} threads x {} values over {}x{}; TV layout {}",
        atom.threads(),
        atom.values(),
        atom.rows,
        atom.cols,
        atom.cute_notation()
    )];
    if !whole {
        let (rn, cn) = atom.operand.axes();
        caption.insert(
            0,
            format!(
                "Shown: {rn} {}-{} and {cn} {}-{} of the {}x{} atom; the whole figure has every cell.",
                rows.start,
                rows.end - 1,
                cols.start,
                cols.end - 1,
                atom.rows,
                atom.cols
            ),
        );
    }
    if shared {
        caption.push("Cells held by several threads list every owner, one band each.".to_string());
    }
    let panel = tv_panel_fitted(atom, &atom.name, rows, cols);
    if panel.cells.iter().any(|c| c.span > 1) {
        caption.push("A label across several cells: one thread's consecutive values (T5 V0-7: values 0 to 7).".to_string());
    }
    Figure {
        title: atom.title.clone(),
        panels: vec![(0, 0, panel)],
        legend: thread_legend(atom.threads()),
        caption,
    }
    .to_svg()
}

/// An MMA atom the way CuTe's print_latex lays it out: A on the left, B above, C at the
/// bottom right, so a row of A and a column of B meet at their C cell. The three panels
/// share one labelling (so their cells line up): plain where A and C fit the column side
/// by side, else stacked.
pub fn mma(atom: &MmaAtom) -> String {
    let panels = |labels: TvLabels| {
        let all = |t: &TvAtom| (0..t.rows, 0..t.cols);
        let (br, bc) = all(&atom.b);
        let (ar, ac) = all(&atom.a);
        let (cr, cc) = all(&atom.c);
        [
            tv_panel(
                &atom.b,
                format!("B ({}x{}, k x n)", atom.k, atom.n),
                br,
                bc,
                labels,
            ),
            tv_panel(
                &atom.a,
                format!("A ({}x{}, m x k)", atom.m, atom.k),
                ar,
                ac,
                labels,
            ),
            tv_panel(
                &atom.c,
                format!("C/D ({}x{}, m x n)", atom.m, atom.n),
                cr,
                cc,
                labels,
            ),
        ]
    };
    let width = |[b, a, c]: &[Panel; 3]| a.width() + PANEL_GAP + b.width().max(c.width());
    let plain = panels(TvLabels::Plain);
    let [b, a, c] = if fits_column(width(&plain)) {
        plain
    } else {
        panels(TvLabels::Stacked)
    };
    Figure {
        title: atom.title.clone(),
        panels: vec![(1, 0, b), (0, 1, a), (1, 1, c)],
        legend: thread_legend(32),
        caption: vec![
            format!(
                "A {}   B {}   C {}",
                atom.a.cute_notation(),
                atom.b.cute_notation(),
                atom.c.cute_notation()
            ),
            "TnVm: thread (lane) n, fragment element m (register m/2, half m%2).".to_string(),
        ],
    }
    .to_svg()
}

/// `ldmatrix`: which lane supplies each stored row's address (left), and which lane and
/// register receives each element (right).
pub fn ldmatrix(l: &Ldmatrix) -> String {
    let rows = 8 * l.num;
    let addr_cells = (0..rows)
        .map(|r| {
            let lanes: Vec<u32> = l.src.owners_of(r, 0).iter().map(|&(t, _)| t).collect();
            let label: Vec<String> = lanes.iter().map(|t| format!("T{t}")).collect();
            let tip: Vec<String> = lanes.iter().map(|t| t.to_string()).collect();
            Cell::single(
                label.join(","),
                color(u64::from(r)),
                format!(
                    "matrix {} row {}: 16-byte row address from lane {}",
                    r / 8,
                    r % 8,
                    tip.join(", ")
                ),
            )
        })
        .collect();
    let mut addr = Panel::new("row address", rows, 1, addr_cells);
    addr.row_labels = (0..rows)
        .map(|r| format!("m{} r{}", r / 8, r % 8))
        .collect();
    addr.col_labels = vec!["lane".to_string()];

    let owners = l.dst.owners();
    let dst_cells = owners
        .iter()
        .enumerate()
        .map(|(k, who)| {
            let (r, c) = (k as u32 / 8, k as u32 % 8);
            let who_text: Vec<String> = who
                .iter()
                .map(|(t, v)| format!("lane {t} reg {} half {} (V{v})", v / 2, v % 2))
                .collect();
            Cell {
                stripes: who
                    .iter()
                    .map(|&(t, v)| Stripe {
                        text: format!("T{t}V{v}"),
                        fill: color(u64::from(t)).to_string(),
                    })
                    .collect(),
                tooltip: format!(
                    "matrix {} row {} col {} (byte {} of the row): {}",
                    r / 8,
                    r % 8,
                    c,
                    2 * c,
                    who_text.join(", ")
                ),
                alert: false,
                span: 1,
            }
        })
        .collect();
    let mut dst = Panel::new("destination (stored layout)", rows, 8, dst_cells);
    dst.row_labels = vec![String::new(); rows as usize];
    let tr = if l.trans { ".trans" } else { "" };
    Figure {
        title: format!("ldmatrix.sync.aligned.m8n8.x{}{tr}.shared.b16", l.num),
        panels: vec![(0, 0, addr), (1, 0, dst)],
        legend: thread_legend(32),
        caption: vec![
            format!(
                "Lanes 0..{} each supply the address of one 16-byte row; {} matrices are delivered in {} phases of 8 rows.",
                rows - 1,
                l.num,
                l.num
            ),
            if l.trans {
                "With .trans, register m of lane l holds stored rows 2(l%4), 2(l%4)+1 of column l/4 of matrix m.".to_string()
            } else {
                "Register m of lane l holds row l/4, columns 2(l%4), 2(l%4)+1 of matrix m.".to_string()
            },
            "TnVm: lane n, element m = 2*register + half.".to_string(),
        ],
    }
    .to_svg()
}

/// A bank's width in a bank map: 32 of them and the line addresses fit the column.
const BANK_CELL_W: f64 = 20.0;

/// The label of a run of banks `width` wide that `lanes` read: `L5`, or `5` where that
/// does not fit; several lanes on one word `L0+31` (the first and how many more), or
/// `×32` (how many).
fn lane_label(lanes: &[u32], width: f64) -> String {
    let fits = |s: &String| s.chars().count() as f64 * CHAR_W + 3.0 <= width;
    let candidates = match lanes {
        [one] => [format!("L{one}"), one.to_string()],
        _ => [
            format!("L{}+{}", lanes[0], lanes.len() - 1),
            format!("×{}", lanes.len()),
        ],
    };
    let [long, short] = candidates;
    if fits(&long) { long } else { short }
}

/// A bank map: one panel per phase, rows = the 128-byte lines that phase touches, columns = banks;
/// touched words show their lane(s) and the bank group's color, conflicted banks are
/// outlined in red, and the caption gives wavefronts against the ideal. It needs no
/// [`MAX_CELLS`](crate::figure_size::MAX_CELLS) check: 32 lanes of at most 16 bytes
/// touch at most 64 lines, so at most 4 phases x 64 x 32 cells.
pub fn bank_map(access: &Access, report: &BankReport) -> String {
    let mut panels = Vec::new();
    for phase in &report.phases {
        // Only the lines this phase touches: a line another phase reads would be a row of
        // empty cells here.
        let mut lines: Vec<u64> = report
            .lanes
            .iter()
            .filter(|la| la.phase == phase.index)
            .flat_map(|la| {
                let bytes = access.op.bytes_per_lane();
                (la.addr..la.addr + bytes)
                    .step_by(bank::WORD_BYTES as usize)
                    .map(|w| w / 128)
            })
            .collect();
        lines.sort_unstable();
        lines.dedup();
        let conflicted: Vec<u32> = phase.conflicts.iter().map(|c| c.bank).collect();
        let mut cells = Vec::new();
        for &line in &lines {
            let readers: Vec<Vec<u32>> = (0..bank::BANKS)
                .map(|b| {
                    let word = line * 128 + 4 * u64::from(b);
                    report
                        .lanes
                        .iter()
                        .filter(|la| {
                            la.phase == phase.index
                                && la.addr <= word
                                && word < la.addr + access.op.bytes_per_lane()
                        })
                        .map(|la| la.lane)
                        .collect()
                })
                .collect();
            for b in 0..bank::BANKS {
                let word = line * 128 + 4 * u64::from(b);
                let lanes = &readers[b as usize];
                let alert = !lanes.is_empty() && conflicted.contains(&b);
                if lanes.is_empty() {
                    cells.push(Cell::empty(format!(
                        "byte {word}, bank {b}: not accessed in phase {}",
                        phase.index
                    )));
                    continue;
                }
                // One label per run of banks the same lanes read (a lane's 16 bytes are
                // four banks), so that 32 banks fit the column.
                let starts_run = b == 0 || readers[b as usize - 1] != *lanes;
                let run = readers[b as usize..]
                    .iter()
                    .take_while(|r| *r == lanes)
                    .count() as u32;
                let names: Vec<String> = lanes.iter().map(|l| l.to_string()).collect();
                let mut tip = format!(
                    "byte {word}, bank {b}, phase {}: lane(s) {}",
                    phase.index,
                    names.join(", ")
                );
                if alert {
                    let words = phase
                        .conflicts
                        .iter()
                        .find(|c| c.bank == b)
                        .map(|c| c.words.len())
                        .unwrap_or(0);
                    tip.push_str(&format!(
                        "; bank {b} has {words} distinct words in this phase"
                    ));
                }
                cells.push(Cell {
                    stripes: vec![Stripe {
                        text: if starts_run {
                            lane_label(lanes, f64::from(run) * BANK_CELL_W)
                        } else {
                            String::new()
                        },
                        fill: color(u64::from(b / 4)).to_string(),
                    }],
                    tooltip: tip,
                    alert,
                    span: if starts_run { run } else { 0 },
                });
            }
        }
        let way = if phase.wavefronts > 1 {
            format!(", {}-way conflict", phase.wavefronts)
        } else {
            String::new()
        };
        let mut p = Panel::new(
            format!(
                "phase {}: lanes {}-{}, {} wavefront{}{way}",
                phase.index,
                phase.first_lane,
                phase.last_lane,
                phase.wavefronts,
                if phase.wavefronts == 1 { "" } else { "s" }
            ),
            lines.len() as u32,
            bank::BANKS,
            cells,
        );
        p.row_labels = lines.iter().map(|l| format!("@{}", l * 128)).collect();
        p.col_labels = (0..bank::BANKS).map(|b| format!("b{b}")).collect();
        p.cell_w = Some(BANK_CELL_W);
        panels.push((0, phase.index as u32, p));
    }
    let mut legend: Vec<(String, String)> = (0..8)
        .map(|g| {
            (
                color(g).to_string(),
                format!("banks {}-{}", 4 * g, 4 * g + 3),
            )
        })
        .collect();
    legend.push((EMPTY_FILL.to_string(), "not accessed".to_string()));
    Figure {
        title: format!("Bank map: {} ({})", access.name, report.op),
        panels,
        legend,
        caption: vec![
            access.description.clone(),
            format!(
                "{} wavefronts vs {} ideal{}. Rows: the 128-byte lines (32 banks x 4 bytes) each phase touches; a cell names the lane that reads it (Ln or n; ×n: n lanes read one word); red outline: a bank with several distinct words in one phase.",
                report.wavefronts,
                report.ideal,
                if report.conflict_free() { " (conflict-free)".to_string() } else { format!(" ({}-way worst phase)", report.max_way) }
            ),
        ],
    }
    .to_svg()
}

/// A TMA box at 16-byte granularity (the TMA swizzles move whole 16-byte chunks): the
/// box's chunks with their global coordinates (left) and the same chunks at their
/// physical place in shared memory (right), colored by the chunk's column in the box.
pub fn tma(b: &TmaBox) -> String {
    // `row:col` in a cell where the two panels fit the column, else the row over the col.
    let one_line = tma_figure(b, ":");
    if fits_column(
        one_line
            .panels
            .iter()
            .map(|(_, _, p)| p.width())
            .sum::<f64>()
            + PANEL_GAP,
    ) {
        one_line.to_svg()
    } else {
        tma_figure(b, "\n").to_svg()
    }
}

fn tma_figure(b: &TmaBox, row_col: &str) -> Figure {
    let cells = b.cells();
    let per_chunk = 16 / b.elem_bytes;
    let chunks = b.box_cols / per_chunk;
    let row_bytes = u64::from(b.box_cols * b.elem_bytes);
    let empty = Cell {
        stripes: Vec::new(),
        tooltip: String::new(),
        alert: false,
        span: 1,
    };
    let mut left = Vec::new();
    let mut right = vec![empty; (b.box_rows * chunks) as usize];
    for r in 0..b.box_rows {
        for k in 0..chunks {
            let first = cells[(r * b.box_cols + k * per_chunk) as usize];
            let (line, slot) = (
                first.smem_byte / row_bytes,
                (first.smem_byte % row_bytes) / 16,
            );
            let fill = color(u64::from(k));
            let banks = format!(
                "banks {}-{}",
                bank::bank_of(first.smem_byte),
                bank::bank_of(first.smem_byte) + 3
            );
            let what = format!(
                "box row {r}, columns {}-{}",
                k * per_chunk,
                (k + 1) * per_chunk - 1
            );
            let global = match first.global {
                Some((gr, gc)) => format!("global ({gr}, {gc}-{})", gc + per_chunk - 1),
                None => "out of bounds (zero-filled)".to_string(),
            };
            let to = format!(
                "smem bytes {}-{} (row {line}, chunk {slot}, {banks})",
                first.smem_byte,
                first.smem_byte + 15
            );
            left.push(match first.global {
                Some((gr, gc)) => Cell::single(
                    format!("{gr}{row_col}{gc}"),
                    fill,
                    format!("{what} = {global} -> {to}"),
                ),
                None => Cell {
                    stripes: Vec::new(),
                    tooltip: format!("{what}: {global} -> {to}"),
                    alert: false,
                    span: 1,
                },
            });
            right[(line * u64::from(chunks) + slot) as usize] =
                Cell::single(format!("r{r}c{k}"), fill, format!("{to}: {what}, {global}"));
        }
    }
    let sw = match b.swizzle.as_swizzle() {
        Some((x, y, z)) => format!(
            "{}B swizzle = Swizzle<{x},{y},{z}> on byte offsets",
            b.swizzle.span_bytes().unwrap_or(0)
        ),
        None => "no swizzle".to_string(),
    };
    let mut global = Panel::new(
        if row_col == ":" {
            "box in global memory (row:first col of each 16-byte chunk)"
        } else {
            "box in global memory (row over first col of each 16-byte chunk)"
        },
        b.box_rows,
        chunks,
        left,
    );
    global.row_labels = (0..b.box_rows).map(|r| format!("r{r}")).collect();
    global.col_labels = (0..chunks).map(|k| format!("c{k}")).collect();
    let mut smem = Panel::new(
        "shared memory (box row r, chunk c)",
        b.box_rows,
        chunks,
        right,
    );
    smem.row_labels = (0..b.box_rows)
        .map(|l| format!("@{}", u64::from(l) * row_bytes))
        .collect();
    smem.col_labels = (0..chunks).map(|k| format!("{}B", 16 * k)).collect();
    Figure {
        title: format!(
            "TMA box {}x{} at ({},{}) of a {}x{} tensor, {sw}",
            b.box_rows, b.box_cols, b.origin_row, b.origin_col, b.tensor_rows, b.tensor_cols
        ),
        panels: vec![(0, 0, global), (1, 0, smem)],
        legend: (0..u64::from(chunks).min(PALETTE.len() as u64))
            .map(|i| (color(i).to_string(), format!("box chunk c{i}")))
            .collect(),
        caption: vec![format!(
            "{}-byte elements, {per_chunk} per 16-byte chunk; each shared-memory row is {row_bytes} bytes.",
            b.elem_bytes
        )],
    }
}

/// A plain or swizzled layout as a grid: mode 0 down the rows, the remaining modes
/// (colexicographically) across the columns; a rank-1 layout is one row. Refuses a
/// layout of more than [`MAX_CELLS`](crate::figure_size::MAX_CELLS) elements.
pub fn layout_grid(layout: &crate::swizzle::AnyLayout) -> Result<LayoutGrid, TooLarge> {
    layout_grid_part(layout, |_, _| None)
}

/// [`layout_grid`] holding only the top-left window `window(rows, cols)` picks of the
/// whole grid (None: all of it), computed for those cells alone: a window of a large
/// layout costs what the window holds.
pub fn layout_grid_part(
    layout: &crate::swizzle::AnyLayout,
    window: impl Fn(u32, u32) -> Option<(u32, u32)>,
) -> Result<LayoutGrid, TooLarge> {
    let shape = layout.shape();
    check_cells(
        format_args!("layout {layout}"),
        &shape
            .flatten()
            .iter()
            .map(|&s| s.max(0) as u64)
            .collect::<Vec<_>>(),
    )?;
    let size = layout.size().max(0) as u32;
    let rows = if shape.rank() >= 2 {
        shape.get(0).size().max(1) as u32
    } else {
        1
    };
    let cols = size / rows.max(1);
    let part = window(rows, cols)
        .map(|(r, c)| (r.clamp(1, rows.max(1)), c.clamp(1, cols.max(1))))
        .filter(|&(r, c)| (r, c) != (rows, cols));
    let (keep_rows, keep_cols) = part.unwrap_or((rows, cols));
    let mut offsets = Vec::with_capacity((keep_rows * keep_cols) as usize);
    let mut coords = Vec::with_capacity((keep_rows * keep_cols) as usize);
    for r in 0..keep_rows {
        for c in 0..keep_cols {
            let index = i64::from(r + rows * c);
            offsets.push(layout.call(index));
            coords.push(crate::int_tuple::idx2crd(index, shape).to_string());
        }
    }
    Ok(LayoutGrid {
        notation: layout.to_string(),
        rows: keep_rows,
        cols: keep_cols,
        offsets,
        coords,
        of: part.map(|_| (rows, cols)),
    })
}
