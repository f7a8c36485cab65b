//! The ladder at a glance: one bar per prefill stage of a run, in the stage tree's order
//! and coloured by branch, with FlashAttention-2, cuDNN and FlashAttention-4 as reference
//! lines (`ladder.svg` without the mask, `ladder-causal.svg` with it), and the same
//! numbers as a small markdown table (`ladder-table.md`).
//!
//! Drawn when a run holds stage rows of at least two branches of the tree
//! ([`crate::stages::ladder_branches`]); decode stages measure another workload and are
//! left out. Like the other plots, the files depend on the JSON alone.

use super::results::{BenchResults, Row, RowKind};
use super::style::{
    FIGURE_W, MIN_TEXT_PX, baseline_color, figure_subtitle, font, nice_ceiling, plot_err,
};
use anyhow::{Context as _, Result};
use harness::{GpuArch, StageInfo, WorkloadKind};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The chart without the mask.
pub const LADDER_SVG: &str = "ladder.svg";
/// The chart with the causal mask.
pub const LADDER_CAUSAL_SVG: &str = "ladder-causal.svg";
/// The table: one row per stage, TFLOPS at both head dims, with and without the mask.
pub const LADDER_TABLE_MD: &str = "ladder-table.md";
/// Every file [`write`] writes, in the order it writes them.
pub const LADDER_FILES: [&str; 3] = [LADDER_SVG, LADDER_CAUSAL_SVG, LADDER_TABLE_MD];

/// The baselines drawn as reference lines, by row name, with the kernel each one is.
const REFERENCES: [(&str, &str); 3] = [
    ("sdpa-flash", "FlashAttention-2"),
    ("sdpa-cudnn", "cuDNN"),
    ("flash-attn-4", "FlashAttention-4"),
];

/// What each baseline row is, for the table.
fn baseline_what(name: &str) -> &str {
    match name {
        "sdpa-flash" => "FlashAttention-2 (PyTorch SDPA)",
        "sdpa-cudnn" => "cuDNN (PyTorch SDPA)",
        "sdpa-efficient" => "memory-efficient kernel (PyTorch SDPA)",
        "flash-attn" => "FlashAttention-2 (flash_attn)",
        "flash-attn-3" => "FlashAttention-3",
        "flash-attn-4" => "FlashAttention-4 (flash_attn.cute)",
        _ => "baseline",
    }
}

/// One branch of the stage tree, as far as the run holds its stages.
struct Branch {
    name: String,
    color: RGBColor,
    stages: Vec<&'static StageInfo>,
}

const BRANCH_COLORS: [RGBColor; 4] = [
    RGBColor(66, 120, 180),
    RGBColor(0, 150, 110),
    RGBColor(150, 90, 170),
    RGBColor(180, 130, 0),
];

/// `1-9`, `10-13, 16`: stage numbers with consecutive runs shortened.
fn number_list(numbers: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", numbers[i], numbers[j])
        } else {
            numbers[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The prefill branches of the stage tree that have stage rows in `rows`, each cut down
/// to the stages that do, in the tree's order.
fn branches(rows: &[Row]) -> Vec<Branch> {
    let all = crate::stages::STAGES;
    let in_run = |n: u32| {
        rows.iter()
            .any(|r| r.kind == RowKind::Stage && r.stage == Some(n))
    };
    crate::stages::ladder_branches(all)
        .into_iter()
        .filter_map(|branch| {
            let stages: Vec<&'static StageInfo> = branch
                .iter()
                .filter(|&&n| in_run(n))
                .filter_map(|&n| all.iter().find(|s| s.info().number == n))
                .filter(|s| s.workload().kind() == WorkloadKind::Prefill)
                .map(|s| s.info())
                .collect();
            (!stages.is_empty()).then_some(stages)
        })
        .enumerate()
        .map(|(k, stages)| {
            let numbers: Vec<u32> = stages.iter().map(|i| i.number).collect();
            let gpu = match stages[0].gpu {
                GpuArch::Sm80 => "any GPU from sm_80",
                GpuArch::Sm90a => "Hopper only (sm_90a)",
            };
            Branch {
                name: format!(
                    "{} {}: {gpu}",
                    if numbers.len() == 1 {
                        "stage"
                    } else {
                        "stages"
                    },
                    number_list(&numbers)
                ),
                color: BRANCH_COLORS[k % BRANCH_COLORS.len()],
                stages,
            }
        })
        .collect()
}

/// Whether [`write`] has a ladder to draw: stage rows of at least two branches.
pub fn draws_ladder(res: &BenchResults) -> bool {
    branches(&res.rows).len() >= 2
}

/// The shape the chart shows: head dim 128 (or the largest the run has) at the largest
/// seqlen of the run.
fn chart_shape(rows: &[Row]) -> (usize, usize) {
    let dims = rows.iter().map(|r| r.problem.shape.head_dim);
    let dim = if dims.clone().any(|d| d == 128) {
        128
    } else {
        dims.max().unwrap_or(128)
    };
    (dim, largest_seqlen(rows))
}

fn largest_seqlen(rows: &[Row]) -> usize {
    rows.iter()
        .map(|r| r.problem.shape.seqlen_q)
        .max()
        .unwrap_or(0)
}

/// The row of `select` on one shape, if the run has it.
fn row_at(
    rows: &[Row],
    select: impl Fn(&Row) -> bool,
    (dim, seqlen, causal): (usize, usize, bool),
) -> Option<&Row> {
    rows.iter().find(|r| {
        select(r)
            && r.problem.shape.head_dim == dim
            && r.problem.shape.seqlen_q == seqlen
            && r.problem.causal == causal
    })
}

fn stage_row(rows: &[Row], n: u32, shape: (usize, usize, bool)) -> Option<&Row> {
    row_at(
        rows,
        |r| r.kind == RowKind::Stage && r.stage == Some(n),
        shape,
    )
}

fn baseline_row<'a>(rows: &'a [Row], name: &str, shape: (usize, usize, bool)) -> Option<&'a Row> {
    row_at(
        rows,
        |r| r.kind == RowKind::Baseline && r.name == name,
        shape,
    )
}

/// TFLOPS as the table and the bars' labels print them: whole numbers, one decimal below 10.
fn tflops_text(t: f64) -> String {
    if t < 10.0 {
        format!("{t:.1}")
    } else {
        format!("{t:.0}")
    }
}

/// A table cell: TFLOPS, `FAIL` (failed its check), `err` (failed to run) or `-`.
fn cell(row: Option<&Row>) -> String {
    match row {
        Some(r) if r.plottable() => tflops_text(r.tflops.unwrap_or(0.0)),
        Some(r) => r.status.table_mark().into(),
        None => "-".into(),
    }
}

/// A stage's idea, short: the stage table's `idea` up to its first colon (or semicolon).
pub fn short_idea(idea: &str) -> &str {
    idea.split([':', ';']).next().unwrap_or(idea).trim()
}

/// The markdown table: one row per stage in the tree's order, then the baselines, TFLOPS
/// at d128 and d64, without and with the mask, at the run's largest seqlen.
pub fn ladder_table(res: &BenchResults) -> String {
    let rows = &res.rows;
    let seqlen = largest_seqlen(rows);
    let h = &res.header;
    let shape = rows
        .iter()
        .find(|r| r.problem.shape.seqlen_q == seqlen)
        .map(|r| {
            format!(
                "batch {} x {} heads, ",
                r.problem.shape.batch, r.problem.shape.heads
            )
        })
        .unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "TFLOPS on one {}, {}, {shape}seqlen {seqlen};\n`-` not run, `FAIL` failed its check.\n",
        h.device.name, h.sweep.sweep.dtype
    );
    let columns = [(128, false), (128, true), (64, false), (64, true)];
    let _ = writeln!(
        out,
        "| stage | idea | d128 | d128 causal | d64 | d64 causal |\n|---|---|--:|--:|--:|--:|"
    );
    for branch in branches(rows) {
        for info in &branch.stages {
            let cells: Vec<String> = columns
                .iter()
                .map(|&(d, c)| cell(stage_row(rows, info.number, (d, seqlen, c))))
                .collect();
            let _ = writeln!(
                out,
                "| {}-{} | {} | {} |",
                info.number,
                info.slug,
                short_idea(info.idea),
                cells.join(" | ")
            );
        }
    }
    let mut names: Vec<&str> = rows
        .iter()
        .filter(|r| r.kind == RowKind::Baseline && r.plottable())
        .map(|r| r.name.as_str())
        .collect();
    // The reference lines first, in their order, then the others by name.
    names.sort_by_key(|n| {
        (
            REFERENCES
                .iter()
                .position(|(r, _)| r == n)
                .unwrap_or(REFERENCES.len()),
            *n,
        )
    });
    names.dedup();
    for name in names {
        let cells: Vec<String> = columns
            .iter()
            .map(|&(d, c)| cell(baseline_row(rows, name, (d, seqlen, c))))
            .collect();
        let _ = writeln!(
            out,
            "| {name} | {} | {} |",
            baseline_what(name),
            cells.join(" | ")
        );
    }
    out
}

// The chart's layout, in pixels.
const TITLE_H: i32 = 52;
/// Left of the plot: tick labels and the axis name.
const PLOT_LEFT: i32 = 64;
/// Right of the plot: the reference lines' labels.
const REF_COLUMN_W: i32 = 150;
const PLOT_TOP: i32 = TITLE_H + 16;
const PLOT_H: i32 = 320;
/// Under the plot: each bar's `N-slug`, turned upright; it holds `12-warp-specialized`.
const BAR_LABELS_H: i32 = 140;
/// Under the bar labels: each branch's bracket and name.
const BRANCH_LABEL_H: i32 = 40;
/// Least distance between two reference labels, so they never overlap.
const REF_LABEL_STEP: i32 = 16;

fn anchored(px: f64, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle::from(font(px).into_font()).pos(Pos::new(h, v))
}

/// One chart: the bars of every branch on one shape, the reference lines across them.
fn draw_chart(
    path: &Path,
    res: &BenchResults,
    branches: &[Branch],
    (dim, seqlen, causal): (usize, usize, bool),
) -> Result<()> {
    let rows = &res.rows;
    let shape = (dim, seqlen, causal);
    let height = (PLOT_TOP + PLOT_H + BAR_LABELS_H + BRANCH_LABEL_H) as u32;
    let root = SVGBackend::new(path, (FIGURE_W, height)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let w = FIGURE_W as i32;
    let mask = if causal { "causal" } else { "no mask" };
    root.draw(&Text::new(
        format!("The ladder at a glance: head dim {dim}, seqlen {seqlen}, {mask}"),
        (w / 2, 8),
        anchored(16.0, HPos::Center, VPos::Top),
    ))
    .map_err(plot_err)?;
    root.draw(&Text::new(
        figure_subtitle(res),
        (w / 2, 30),
        anchored(13.0, HPos::Center, VPos::Top),
    ))
    .map_err(plot_err)?;

    let references: Vec<(&str, RGBColor, f64)> = REFERENCES
        .iter()
        .filter_map(|&(name, label)| {
            let r = baseline_row(rows, name, shape).filter(|r| r.plottable())?;
            Some((label, baseline_color(name), r.tflops?))
        })
        .collect();
    let bar_value = |n: u32| stage_row(rows, n, shape).filter(|r| r.plottable())?.tflops;
    let top = branches
        .iter()
        .flat_map(|b| b.stages.iter().filter_map(|i| bar_value(i.number)))
        .chain(references.iter().map(|r| r.2))
        .fold(1.0f64, f64::max);
    let y_max = nice_ceiling(top * 1.08);
    let (plot_right, plot_bottom) = (w - REF_COLUMN_W, PLOT_TOP + PLOT_H);
    let to_y = |v: f64| plot_bottom - (v / y_max * PLOT_H as f64).round() as i32;
    let grey = RGBColor(238, 238, 238);

    // The y axis: grid lines at round steps, their labels, the axis name.
    let step = nice_ceiling(y_max / 8.0);
    let mut v = 0.0;
    while v <= y_max + 1e-9 {
        let y = to_y(v);
        root.draw(&PathElement::new(
            vec![(PLOT_LEFT, y), (plot_right, y)],
            if v == 0.0 {
                BLACK.into()
            } else {
                grey.stroke_width(1)
            },
        ))
        .map_err(plot_err)?;
        root.draw(&Text::new(
            format!("{v:.0}"),
            (PLOT_LEFT - 6, y),
            anchored(MIN_TEXT_PX, HPos::Right, VPos::Center),
        ))
        .map_err(plot_err)?;
        v += step;
    }
    root.draw(&PathElement::new(
        vec![(PLOT_LEFT, PLOT_TOP), (PLOT_LEFT, plot_bottom)],
        BLACK,
    ))
    .map_err(plot_err)?;
    root.draw(&Text::new(
        "TFLOPS",
        (14, PLOT_TOP + PLOT_H / 2),
        anchored(13.0, HPos::Center, VPos::Center).transform(FontTransform::Rotate270),
    ))
    .map_err(plot_err)?;

    // The reference lines, under the bars and their labels, named in the column right of
    // the plot; a name pushed down off its line (two close values) keeps a short lead to it.
    let mut refs: Vec<(&str, RGBColor, f64, i32)> = references
        .iter()
        .map(|&(label, color, t)| (label, color, t, to_y(t)))
        .collect();
    refs.sort_by_key(|r| r.3);
    let mut last = i32::MIN / 2;
    for (label, color, t, y) in refs {
        root.draw(&DashedPathElement::new(
            vec![(PLOT_LEFT, y), (plot_right, y)],
            6,
            4,
            color.stroke_width(2),
        ))
        .map_err(plot_err)?;
        let label_y = y.max(last + REF_LABEL_STEP);
        last = label_y;
        root.draw(&PathElement::new(
            vec![(plot_right, y), (plot_right + 6, label_y)],
            color.stroke_width(1),
        ))
        .map_err(plot_err)?;
        root.draw(&Text::new(
            format!("{label} {}", tflops_text(t)),
            (plot_right + 9, label_y),
            anchored(13.0, HPos::Left, VPos::Center).color(&color.mix(1.0)),
        ))
        .map_err(plot_err)?;
    }

    // The bars, branch by branch, a gap of most of a bar between branches.
    let bars: usize = branches.iter().map(|b| b.stages.len()).sum();
    let gap = 0.8;
    let units = bars as f64 + gap * (branches.len().saturating_sub(1)) as f64 + 0.5;
    let pitch = (plot_right - PLOT_LEFT) as f64 / units;
    let bar_w = (pitch * 0.72).round() as i32;
    let mut x = PLOT_LEFT as f64 + pitch * 0.25;
    for branch in branches {
        let first = x;
        for info in &branch.stages {
            let centre = (x + pitch / 2.0).round() as i32;
            let (left, right) = (centre - bar_w / 2, centre + bar_w / 2);
            let label = match stage_row(rows, info.number, shape) {
                Some(r) if r.plottable() => {
                    let t = r.tflops.unwrap_or(0.0);
                    root.draw(&Rectangle::new(
                        [(left, to_y(t)), (right, plot_bottom)],
                        branch.color.filled(),
                    ))
                    .map_err(plot_err)?;
                    (tflops_text(t), to_y(t))
                }
                row => (cell(row), plot_bottom),
            };
            // A white patch under the value, so a reference line never crosses it.
            let half = 4 * label.0.len() as i32 + 2;
            root.draw(&Rectangle::new(
                [(centre - half, label.1 - 19), (centre + half, label.1 - 3)],
                WHITE.filled(),
            ))
            .map_err(plot_err)?;
            root.draw(&Text::new(
                label.0,
                (centre, label.1 - 3),
                anchored(MIN_TEXT_PX, HPos::Center, VPos::Bottom),
            ))
            .map_err(plot_err)?;
            root.draw(&Text::new(
                format!("{}-{}", info.number, info.slug),
                (centre, plot_bottom + 6),
                anchored(13.0, HPos::Right, VPos::Center).transform(FontTransform::Rotate270),
            ))
            .map_err(plot_err)?;
            x += pitch;
        }
        // The branch's bracket and name under its bars.
        let (l, r) = (
            (first + pitch * 0.1).round() as i32,
            (x - pitch * 0.1).round() as i32,
        );
        let y = plot_bottom + BAR_LABELS_H + 6;
        root.draw(&PathElement::new(
            vec![(l, y - 5), (l, y), (r, y), (r, y - 5)],
            branch.color.stroke_width(2),
        ))
        .map_err(plot_err)?;
        let name_x = ((l + r) / 2).min(w - 4 - 7 * branch.name.len() as i32 / 2);
        root.draw(&Text::new(
            branch.name.clone(),
            (name_x, y + 6),
            anchored(13.0, HPos::Center, VPos::Top).color(&branch.color.mix(1.0)),
        ))
        .map_err(plot_err)?;
        x += pitch * gap;
    }

    root.present()
        .map_err(plot_err)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Writes the two charts and the table into `dir` when the run holds stages of at least
/// two branches; returns the paths written (none otherwise).
pub fn write(res: &BenchResults, dir: &Path) -> Result<Vec<PathBuf>> {
    let branches = branches(&res.rows);
    if branches.len() < 2 {
        return Ok(Vec::new());
    }
    let (dim, seqlen) = chart_shape(&res.rows);
    let mut written = Vec::new();
    for (name, causal) in [(LADDER_SVG, false), (LADDER_CAUSAL_SVG, true)] {
        let path = dir.join(name);
        draw_chart(&path, res, &branches, (dim, seqlen, causal))?;
        written.push(path);
    }
    let table = dir.join(LADDER_TABLE_MD);
    std::fs::write(&table, ladder_table(res))
        .with_context(|| format!("writing {}", table.display()))?;
    written.push(table);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_lists_shorten_runs() {
        assert_eq!(number_list(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), "1-9");
        assert_eq!(number_list(&[10, 11, 12, 13, 16]), "10-13, 16");
        assert_eq!(number_list(&[3]), "3");
        assert_eq!(number_list(&[1, 3, 4]), "1, 3-4");
    }

    #[test]
    fn short_ideas_stop_at_the_first_colon() {
        assert_eq!(short_idea("cp.async: K/V tiles copied"), "cp.async");
        assert_eq!(
            short_idea("mma.sync + ldmatrix; Q and P"),
            "mma.sync + ldmatrix"
        );
        assert_eq!(short_idea("no colon"), "no colon");
    }

    #[test]
    fn decode_stages_never_make_a_branch() {
        let rows: Vec<Row> = [1u32, 10, 14]
            .iter()
            .map(|&n| {
                Row::new(
                    RowKind::Stage,
                    "x",
                    Some(n),
                    &harness::Problem::new(1, 16, 4096, 128),
                )
            })
            .collect();
        let names: Vec<String> = branches(&rows).into_iter().map(|b| b.name).collect();
        assert_eq!(
            names,
            [
                "stage 1: any GPU from sm_80",
                "stage 10: Hopper only (sm_90a)"
            ]
        );
    }
}
