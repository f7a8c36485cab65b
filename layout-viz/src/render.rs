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

use svg::Document;
use svg::node::element::{Circle, Group, Polyline, Rectangle, Text, Title};

use crate::atoms::{Ldmatrix, MmaAtom, TmaBox, TvAtom};
use crate::bank::{self, Access, BankReport};

/// The most cells one panel draws: a 256 x 256 tile, four times the largest atom a
/// kernel uses (wgmma's 64 x 256 accumulator). Its SVG is about 25 MB already; a larger
/// one is unreadable, and a very large layout would exhaust memory before a byte is
/// written, so it is refused up front.
pub const MAX_CELLS: u64 = 65_536;

/// A figure with more cells than [`MAX_CELLS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} has {cells} cells, more than the {MAX_CELLS} (256 x 256) layout-viz draws; draw a tile of it instead"
)]
pub struct TooLarge {
    /// What was to be drawn, e.g. `layout (100000,100000):(1,100000)`.
    pub what: String,
    /// Saturates at `u128::MAX` for shapes whose size does not fit even that.
    pub cells: u128,
}

/// Refuses a figure of `dims`' product of cells when it exceeds [`MAX_CELLS`]; called
/// before anything of that size is allocated.
pub fn check_cells(what: impl std::fmt::Display, dims: &[u64]) -> Result<(), TooLarge> {
    let cells = dims
        .iter()
        .fold(1u128, |acc, &d| acc.saturating_mul(u128::from(d)));
    if cells > u128::from(MAX_CELLS) {
        return Err(TooLarge {
            what: what.to_string(),
            cells,
        });
    }
    Ok(())
}

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

const CHAR_W: f64 = 7.2;
const LINE_H: f64 = 16.0;
const CELL_PAD: f64 = 8.0;
const PANEL_GAP: f64 = 36.0;
const MARGIN: f64 = 20.0;
const HEADER: f64 = 28.0;

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
        }
    }

    fn lines(&self) -> usize {
        self.cells
            .iter()
            .map(|c| c.stripes.len())
            .max()
            .unwrap_or(1)
            .max(1)
    }

    fn cell_w(&self) -> f64 {
        let chars = self
            .cells
            .iter()
            .flat_map(|c| c.stripes.iter())
            .map(|s| s.text.chars().count())
            .max()
            .unwrap_or(0);
        (chars as f64 * CHAR_W + CELL_PAD).max(26.0)
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
            * CHAR_W
            + 8.0
    }

    fn width(&self) -> f64 {
        (self.label_w() + self.cols as f64 * self.cell_w())
            .max(self.caption.chars().count() as f64 * 8.2)
    }

    fn height(&self) -> f64 {
        HEADER + LINE_H + self.rows as f64 * self.cell_h()
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
        let top = MARGIN + 30.0;
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
        let panels_w: f64 =
            col_w.iter().sum::<f64>() + PANEL_GAP * (slot_cols.saturating_sub(1)) as f64;
        let panels_h: f64 =
            row_h.iter().sum::<f64>() + PANEL_GAP * (slot_rows.saturating_sub(1)) as f64;
        let mut y = top + panels_h + 12.0;

        let mut legend = Group::new().set("class", "legend");
        if !self.legend.is_empty() {
            let mut x = MARGIN;
            let mut widest = 0.0f64;
            for (fill, label) in &self.legend {
                let w = 22.0 + label.chars().count() as f64 * CHAR_W + 18.0;
                if x + w > MARGIN + panels_w.max(600.0) {
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
                widest = widest.max(x);
            }
            y += 30.0;
        }
        let mut caption = Group::new().set("class", "caption");
        for line in &self.caption {
            caption = caption.add(text(MARGIN, y + 12.0, 13.0, line.as_str()));
            y += 20.0;
        }
        // Caption text is 13px (about 8px a character), the title 17px bold (about 10.5).
        let caption_w = self
            .caption
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0) as f64
            * 8.0;
        let caption_w = caption_w.max(self.title.chars().count() as f64 * 10.5);
        let width = (MARGIN * 2.0 + panels_w)
            .max(MARGIN * 2.0 + caption_w)
            .max(640.0)
            .ceil();
        let height = (y + MARGIN).ceil();
        let title =
            text(MARGIN, MARGIN + 12.0, 17.0, self.title.as_str()).set("font-weight", "bold");

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
    let gy = y0 + HEADER + LINE_H;
    let mut g = Group::new().set("class", "panel");
    g = g.add(text(x0, y0 + 14.0, 13.0, p.caption.as_str()).set("font-weight", "bold"));
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
                cell,
                gx + c as f64 * cw,
                gy + r as f64 * ch,
                cw,
                ch,
            ));
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

fn draw_cell(cell: &Cell, x: f64, y: f64, w: f64, h: f64) -> Group {
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
        g = g
            .add(
                Rectangle::new()
                    .set("x", fmt(x))
                    .set("y", fmt(sy))
                    .set("width", fmt(w))
                    .set("height", fmt(h / n))
                    .set("fill", s.fill.as_str()),
            )
            .add(
                text(x + w / 2.0, sy + h / n / 2.0 + 4.0, 11.0, s.text.as_str())
                    .set("text-anchor", "middle"),
            );
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
}

/// A layout's offsets as a grid, colored by offset mod 8; `path` draws the walk through
/// colexicographic indices 0, 1, 2, ...
pub fn layout(grid: &LayoutGrid, path: bool) -> String {
    let cells = (0..grid.rows * grid.cols)
        .map(|k| {
            let (r, c) = (k / grid.cols, k % grid.cols);
            let off = grid.offsets[k as usize];
            let index = r + grid.rows * c;
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
        caption: vec![if path {
            "Each cell shows the offset its coordinate maps to; the line walks indices 0, 1, 2, ... (colexicographic: the first mode fastest).".to_string()
        } else {
            "Each cell shows the offset its coordinate maps to.".to_string()
        }],
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
        caption: vec![format!(
            "Same logical cells in both grids; color = 16-byte chunk of the offset ({elem_bytes}-byte elements, 128-byte rows)."
        )],
    }
    .to_svg()
}

/// One panel of a TV atom: each cell lists every (thread, value) that holds it.
fn tv_panel(atom: &TvAtom, caption: String) -> Panel {
    let (rn, cn) = atom.operand.axes();
    let owners = atom.owners();
    let cells = owners
        .iter()
        .enumerate()
        .map(|(k, who)| {
            let (r, c) = (k as u32 / atom.cols, k as u32 % atom.cols);
            let list: Vec<String> = who.iter().map(|(t, v)| format!("T{t}V{v}")).collect();
            Cell {
                stripes: who
                    .iter()
                    .map(|&(t, v)| Stripe {
                        text: format!("T{t}V{v}"),
                        fill: color(u64::from(t)).to_string(),
                    })
                    .collect(),
                tooltip: if who.is_empty() {
                    format!("{rn}={r} {cn}={c}: no owner")
                } else {
                    format!("{rn}={r} {cn}={c}: {}", list.join(", "))
                },
                alert: false,
            }
        })
        .collect();
    let mut p = Panel::new(caption, atom.rows, atom.cols, cells);
    p.row_labels = (0..atom.rows).map(|r| format!("{rn}{r}")).collect();
    p.col_labels = (0..atom.cols).map(|c| format!("{cn}{c}")).collect();
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

/// A TV layout: every owner of every cell, colored by thread.
pub fn tv(atom: &TvAtom) -> String {
    let shared = atom.owners().iter().any(|o| o.len() > 1);
    let mut caption = vec![format!(
        "{} threads x {} values over {}x{}; TV layout {}",
        atom.threads(),
        atom.values(),
        atom.rows,
        atom.cols,
        atom.cute_notation()
    )];
    if shared {
        caption.push("Cells held by several threads list every owner, one band each.".to_string());
    }
    Figure {
        title: atom.title.clone(),
        panels: vec![(0, 0, tv_panel(atom, atom.name.clone()))],
        legend: thread_legend(atom.threads()),
        caption,
    }
    .to_svg()
}

/// An MMA atom the way CuTe's print_latex lays it out: A on the left, B above, C at the
/// bottom right, so a row of A and a column of B meet at their C cell.
pub fn mma(atom: &MmaAtom) -> String {
    Figure {
        title: atom.title.clone(),
        panels: vec![
            (
                1,
                0,
                tv_panel(&atom.b, format!("B ({}x{}, k x n)", atom.k, atom.n)),
            ),
            (
                0,
                1,
                tv_panel(&atom.a, format!("A ({}x{}, m x k)", atom.m, atom.k)),
            ),
            (
                1,
                1,
                tv_panel(&atom.c, format!("C/D ({}x{}, m x n)", atom.m, atom.n)),
            ),
        ],
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

/// A bank map: one panel per phase, rows = the 128-byte lines touched, columns = banks;
/// touched words show their lane(s) and the bank group's color, conflicted banks are
/// outlined in red, and the caption gives wavefronts against the ideal. It needs no
/// [`MAX_CELLS`] check: 32 lanes of at most 16 bytes touch at most 64 lines, so at
/// most 4 phases x 64 x 32 cells.
pub fn bank_map(access: &Access, report: &BankReport) -> String {
    let mut lines: Vec<u64> = report
        .lanes
        .iter()
        .flat_map(|la| {
            let bytes = access.op.bytes_per_lane();
            (la.addr..la.addr + bytes)
                .step_by(bank::WORD_BYTES as usize)
                .map(|w| w / 128)
        })
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let mut panels = Vec::new();
    for phase in &report.phases {
        let conflicted: Vec<u32> = phase.conflicts.iter().map(|c| c.bank).collect();
        let mut cells = Vec::new();
        for &line in &lines {
            for b in 0..bank::BANKS {
                let word = line * 128 + 4 * u64::from(b);
                let lanes: Vec<u32> = report
                    .lanes
                    .iter()
                    .filter(|la| {
                        la.phase == phase.index
                            && la.addr <= word
                            && word < la.addr + access.op.bytes_per_lane()
                    })
                    .map(|la| la.lane)
                    .collect();
                let alert = !lanes.is_empty() && conflicted.contains(&b);
                cells.push(if lanes.is_empty() {
                    Cell {
                        stripes: Vec::new(),
                        tooltip: format!(
                            "byte {word}, bank {b}: not accessed in phase {}",
                            phase.index
                        ),
                        alert: false,
                    }
                } else {
                    let label = if lanes.len() == 1 {
                        format!("L{}", lanes[0])
                    } else {
                        format!("L{}+{}", lanes[0], lanes.len() - 1)
                    };
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
                    Cell {
                        stripes: vec![Stripe {
                            text: label,
                            fill: color(u64::from(b / 4)).to_string(),
                        }],
                        tooltip: tip,
                        alert,
                    }
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
                "{} wavefronts vs {} ideal{}. Rows: 128-byte lines (32 banks x 4 bytes); red outline: a bank with several distinct words in one phase.",
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
    let cells = b.cells();
    let per_chunk = 16 / b.elem_bytes;
    let chunks = b.box_cols / per_chunk;
    let row_bytes = u64::from(b.box_cols * b.elem_bytes);
    let empty = Cell {
        stripes: Vec::new(),
        tooltip: String::new(),
        alert: false,
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
                    format!("{gr}:{gc}"),
                    fill,
                    format!("{what} = {global} -> {to}"),
                ),
                None => Cell {
                    stripes: Vec::new(),
                    tooltip: format!("{what}: {global} -> {to}"),
                    alert: false,
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
        "box in global memory (row:first col of each 16-byte chunk)",
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
    .to_svg()
}

/// A plain or swizzled layout as a grid: mode 0 down the rows, the remaining modes
/// (colexicographically) across the columns; a rank-1 layout is one row. Refuses a
/// layout of more than [`MAX_CELLS`] elements.
pub fn layout_grid(layout: &crate::swizzle::AnyLayout) -> Result<LayoutGrid, TooLarge> {
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
    let mut offsets = Vec::with_capacity(size as usize);
    let mut coords = Vec::with_capacity(size as usize);
    for r in 0..rows {
        for c in 0..cols {
            let index = i64::from(r + rows * c);
            offsets.push(layout.call(index));
            coords.push(crate::int_tuple::idx2crd(index, shape).to_string());
        }
    }
    Ok(LayoutGrid {
        notation: layout.to_string(),
        rows,
        cols,
        offsets,
        coords,
    })
}
