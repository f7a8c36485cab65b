//! Plots (SVG, via plotters) from a `bench.json`, and `results-table.md` beside them;
//! the ladder at a glance ([`ladder`]) too when the run holds it.
//!
//! Only rows that were timed and passed their check are drawn. Output depends on the
//! JSON alone, so regenerating from a committed run of record gives identical files.

use super::ladder;
use super::output::{causal_title, distinct, results_table};
use super::results::{BenchResults, Row, RowKind};
use super::style::{
    FIGURE_W, MIN_TEXT_PX, baseline_color, figure_subtitle, font, nice_ceiling, plot_err,
    stage_color,
};
use anyhow::{Context as _, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Width of the legend column right of each chart (so it never covers a line); it holds
/// `6-fewer-instructions` at 13px.
const LEGEND_W: u32 = 180;
/// A panel's height, or more where its legend needs it.
const PANEL_H: u32 = 380;
/// The first legend entry's baseline and the step between entries.
const LEGEND_TOP: u32 = 48;
const LEGEND_STEP: u32 = 20;
/// Two lines: the figure's title and the run it is drawn from.
const TITLE_H: u32 = 52;
/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub color: RGBColor,
    pub baseline: bool,
    pub points: Vec<(f64, f64)>,
}

fn row_color(r: &Row) -> RGBColor {
    match (r.kind, r.stage) {
        (RowKind::Stage, Some(n)) => stage_color(n),
        _ => baseline_color(&r.name),
    }
}

/// One series per row name of the selected plottable rows, y chosen by `value`.
pub fn series_of(
    rows: &[Row],
    select: impl Fn(&Row) -> bool,
    value: impl Fn(&Row) -> Option<f64>,
) -> Vec<Series> {
    let mut by_name: BTreeMap<(u8, u32, String), Series> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.plottable() && select(r)) {
        let Some(y) = value(r).filter(|y| y.is_finite()) else {
            continue;
        };
        by_name
            .entry(r.order_key())
            .or_insert_with(|| Series {
                label: r.name.clone(),
                color: row_color(r),
                baseline: r.kind == RowKind::Baseline,
                points: Vec::new(),
            })
            .points
            .push((r.problem.shape.seqlen_q as f64, y));
    }
    by_name
        .into_values()
        .map(|mut s| {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
            s
        })
        .collect()
}

/// Speedup of each stage over the previous stage present, at each shape both ran.
pub fn speedup_series(rows: &[Row], head_dim: usize, causal: bool) -> Vec<Series> {
    let stages: BTreeMap<u32, Vec<&Row>> = rows
        .iter()
        .filter(|r| {
            r.kind == RowKind::Stage
                && r.plottable()
                && r.problem.shape.head_dim == head_dim
                && r.problem.causal == causal
        })
        .fold(BTreeMap::new(), |mut m, r| {
            m.entry(r.stage.unwrap_or(0))
                .or_insert_with(Vec::new)
                .push(r);
            m
        });
    let numbers: Vec<u32> = stages.keys().copied().collect();
    let mut out = Vec::new();
    for (i, &b) in numbers.iter().enumerate().skip(1) {
        // The ladder is a tree: a stage is drawn over the nearest stage of the run on its
        // path down the tree (the one it builds on, or that one's parent, ...), else over
        // the run's stage numbered just before it.
        let a = nearest_ancestor_in(b, &numbers).unwrap_or(numbers[i - 1]);
        let mut points: Vec<(f64, f64)> = stages[&b]
            .iter()
            .filter_map(|rb| {
                let ra = stages[&a]
                    .iter()
                    .find(|ra| ra.problem.shape.seqlen_q == rb.problem.shape.seqlen_q)?;
                Some((rb.problem.shape.seqlen_q as f64, rb.tflops? / ra.tflops?))
            })
            .filter(|(_, s)| s.is_finite() && *s > 0.0)
            .collect();
        points.sort_by(|p, q| p.0.total_cmp(&q.0));
        if !points.is_empty() {
            out.push(Series {
                label: format!("stage {b} over {a}"),
                color: stage_color(b),
                baseline: false,
                points,
            });
        }
    }
    out
}

/// The closest stage on `stage`'s path down the ladder tree (its parent, its parent's
/// parent, ...) that is among `numbers`.
fn nearest_ancestor_in(stage: u32, numbers: &[u32]) -> Option<u32> {
    let mut at = crate::stages::find(stage).ok()?.info().builds_on;
    while let Some(p) = at {
        if numbers.contains(&p) {
            return Some(p);
        }
        at = crate::stages::find(p).ok()?.info().builds_on;
    }
    None
}

/// The y axis of a panel.
#[derive(Clone, Copy, Debug)]
enum YAxis {
    /// Linear from 0 to at least `max`.
    Linear { max: f64 },
    /// A log2 axis spanning `lo..hi` (values, not exponents), ticks at powers of two, the
    /// labels ending in `suffix`; `unit_line` draws a line at 1 (for ratios).
    Log2 {
        lo: f64,
        hi: f64,
        suffix: &'static str,
        unit_line: bool,
    },
}

struct Panel<'a> {
    title: String,
    y_desc: &'a str,
    series: Vec<Series>,
    y: YAxis,
}

fn x_range(rows: &[Row]) -> (f64, f64) {
    let seqlens = rows.iter().map(|r| r.problem.shape.seqlen_q as f64);
    let lo = seqlens.clone().fold(f64::INFINITY, f64::min);
    let hi = seqlens.fold(0.0f64, f64::max);
    if !lo.is_finite() || hi <= 0.0 {
        return (8.75, 14.25);
    }
    (lo.log2() - 0.25, hi.log2() + 0.25)
}

fn draw_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    panel: &Panel,
    (x_lo, x_hi): (f64, f64),
) -> Result<()> {
    let (y_lo, y_hi) = match panel.y {
        YAxis::Linear { max } => (0.0, nice_ceiling(max * 1.05)),
        YAxis::Log2 { lo, hi, .. } => (
            lo.max(1e-9).log2().floor() - 0.1,
            hi.max(lo.max(1e-9) * 2.0).log2().ceil() + 0.1,
        ),
    };
    let to_y = |v: f64| match panel.y {
        YAxis::Linear { .. } => v,
        YAxis::Log2 { .. } => v.max(1e-9).log2(),
    };
    let (w, _) = area.dim_in_pixel();
    let (plot_area, legend_area) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&panel.title, font(15.0))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
        .map_err(plot_err)?;
    let x_fmt = |x: &f64| {
        if (x - x.round()).abs() < 1e-6 {
            format!("{}", 2f64.powi(x.round() as i32) as u64)
        } else {
            String::new()
        }
    };
    let y_fmt = |y: &f64| match panel.y {
        YAxis::Linear { .. } => trim_float(*y),
        YAxis::Log2 { suffix, .. } if (y - y.round()).abs() < 1e-6 => {
            format!("{}{suffix}", trim_float(2f64.powi(y.round() as i32)))
        }
        YAxis::Log2 { .. } => String::new(),
    };
    let x_ticks = ((x_hi - x_lo).round() as usize).max(1) + 1;
    let y_ticks = match panel.y {
        YAxis::Linear { .. } => 10,
        YAxis::Log2 { .. } => ((y_hi - y_lo).round() as usize).max(1) + 1,
    };
    chart
        .configure_mesh()
        .x_labels(x_ticks)
        .y_labels(y_ticks)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc("sequence length")
        .y_desc(panel.y_desc)
        .label_style(font(MIN_TEXT_PX))
        .axis_desc_style(font(13.0))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(plot_err)?;
    if let YAxis::Log2 {
        unit_line: true, ..
    } = panel.y
    {
        chart
            .draw_series(LineSeries::new(
                [(x_lo, 0.0), (x_hi, 0.0)],
                RGBColor(0, 0, 0).stroke_width(1),
            ))
            .map_err(plot_err)?;
    }
    for s in &panel.series {
        let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (x.log2(), to_y(y))).collect();
        let width = if s.baseline { 1 } else { 2 };
        chart
            .draw_series(LineSeries::new(pts.clone(), s.color.stroke_width(width)))
            .map_err(plot_err)?;
        if s.baseline {
            chart
                .draw_series(
                    pts.iter()
                        .map(|&p| Cross::new(p, 4, s.color.stroke_width(1))),
                )
                .map_err(plot_err)?;
        } else {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, s.color.filled())))
                .map_err(plot_err)?;
        }
    }
    // The legend, in its own column.
    for (i, s) in panel.series.iter().enumerate() {
        let y = (LEGEND_TOP + LEGEND_STEP * i as u32) as i32;
        let width = if s.baseline { 1 } else { 2 };
        legend_area
            .draw(&PathElement::new(
                vec![(4, y), (28, y)],
                s.color.stroke_width(width),
            ))
            .map_err(plot_err)?;
        if s.baseline {
            legend_area
                .draw(&Cross::new((16, y), 4, s.color.stroke_width(1)))
                .map_err(plot_err)?;
        } else {
            legend_area
                .draw(&Circle::new((16, y), 3, s.color.filled()))
                .map_err(plot_err)?;
        }
        legend_area
            .draw(&Text::new(s.label.clone(), (34, y - 8), font(13.0)))
            .map_err(plot_err)?;
    }
    if panel.series.is_empty() {
        plot_area
            .draw(&Text::new(
                "no rows passed",
                (w as i32 / 2 - 100, PANEL_H as i32 / 2),
                font(14.0),
            ))
            .map_err(plot_err)?;
    }
    Ok(())
}

/// Panels one under another, under a title and a subtitle, written to `path`.
fn draw_figure(
    path: &Path,
    (title, subtitle): (&str, &str),
    panels: &[Panel],
    x: (f64, f64),
) -> Result<()> {
    // Every panel as tall as the longest legend needs, so the panels line up.
    let series = panels.iter().map(|p| p.series.len()).max().unwrap_or(0) as u32;
    let panel_h = PANEL_H.max(LEGEND_TOP + LEGEND_STEP * series);
    let rows = panels.len().max(1) as u32;
    let root = SVGBackend::new(path, (FIGURE_W, panel_h * rows + TITLE_H)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let centre =
        |px: f64| TextStyle::from(font(px).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(title, (FIGURE_W as i32 / 2, 8), centre(16.0)))
        .map_err(plot_err)?;
    root.draw(&Text::new(
        subtitle,
        (FIGURE_W as i32 / 2, 30),
        centre(13.0),
    ))
    .map_err(plot_err)?;
    let (_, body) = root.split_vertically(TITLE_H);
    for (area, panel) in body.split_evenly((rows as usize, 1)).iter().zip(panels) {
        draw_panel(area, panel, x)?;
    }
    root.present()
        .map_err(plot_err)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The percent-of-speed-of-light figure [`write_all`] writes.
pub const SOL_PERCENT_SVG: &str = "sol-percent.svg";
/// The stage-over-stage speedup figure [`write_all`] writes.
pub const SPEEDUPS_SVG: &str = "speedups.svg";
/// The markdown results table [`write_all`] writes (the book's Results chapter includes it).
pub const RESULTS_TABLE_MD: &str = "results-table.md";

/// The TFLOPS-against-seqlen figure of one head dim.
pub fn tflops_svg(head_dim: usize) -> String {
    format!("tflops-d{head_dim}.svg")
}

/// The figures against seqlen and the results table [`write_all`] may write for a run with
/// these head dims, in the order it writes them.
pub fn sweep_file_names(head_dims: &[usize]) -> Vec<String> {
    let mut names: Vec<String> = head_dims.iter().map(|&d| tflops_svg(d)).collect();
    names.extend([SOL_PERCENT_SVG, SPEEDUPS_SVG, RESULTS_TABLE_MD].map(String::from));
    names
}

/// Every file name [`write_all`] may write for `res`, in the order it writes them: the
/// sweep's figures and table, then the ladder's ([`ladder::LADDER_FILES`]) when the run
/// holds stages of two branches or more. The book's tests check its images against it.
pub fn file_names(res: &BenchResults) -> Vec<String> {
    let dims = distinct(res.rows.iter().map(|r| r.problem.shape.head_dim));
    let mut names = sweep_file_names(&dims);
    if ladder::draws_ladder(res) {
        names.extend(ladder::LADDER_FILES.map(String::from));
    }
    names
}

/// Writes every figure and the results table into `dir`; returns the paths written.
pub fn write_all(res: &BenchResults, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let rows = &res.rows;
    let x = x_range(rows);
    let dims = distinct(rows.iter().map(|r| r.problem.shape.head_dim));
    let causals = distinct(rows.iter().map(|r| r.problem.causal));
    let subtitle = figure_subtitle(res);
    let pass = if rows.iter().any(|r| r.pass == super::sweep::Pass::Backward) {
        super::sweep::Pass::Backward
    } else {
        super::sweep::Pass::Forward
    };
    let mut written = Vec::new();

    // TFLOPS against seqlen, one figure per head dim, causal and not side by side, on one
    // log scale: the stages span three orders of magnitude, and a stage's speedup is the
    // same vertical step wherever it is.
    for &d in &dims {
        let tflops: Vec<f64> = rows
            .iter()
            .filter(|r| r.plottable() && r.problem.shape.head_dim == d)
            .filter_map(|r| r.tflops)
            .collect();
        let lo = tflops.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = tflops.iter().copied().fold(1.0f64, f64::max);
        let panels: Vec<Panel> = causals
            .iter()
            .map(|&c| Panel {
                title: format!("head dim {d}, {}", causal_title(c)),
                y_desc: "TFLOPS (log scale)",
                series: series_of(
                    rows,
                    |r| r.problem.shape.head_dim == d && r.problem.causal == c,
                    |r| r.tflops,
                ),
                y: YAxis::Log2 {
                    lo: if lo.is_finite() { lo } else { 1.0 },
                    hi,
                    suffix: "",
                    unit_line: false,
                },
            })
            .collect();
        let path = dir.join(tflops_svg(d));
        draw_figure(
            &path,
            (&format!("{} TFLOPS, head dim {d}", pass.title()), &subtitle),
            &panels,
            x,
        )?;
        written.push(path);
    }

    // Percent of the measured cuBLAS GEMM speed of light.
    if let Some(gemm) = res.header.speed_of_light.gemm_tflops {
        let max = rows
            .iter()
            .filter(|r| r.plottable())
            .filter_map(|r| r.sol_percent)
            .fold(10.0f64, f64::max);
        let mut panels = Vec::new();
        for &d in &dims {
            for &c in &causals {
                panels.push(Panel {
                    title: format!("head dim {d}, {}", causal_title(c)),
                    y_desc: "% of cuBLAS GEMM",
                    series: series_of(
                        rows,
                        |r| r.problem.shape.head_dim == d && r.problem.causal == c,
                        |r| r.sol_percent,
                    ),
                    y: YAxis::Linear {
                        max: max.clamp(10.0, 100.0),
                    },
                });
            }
        }
        let path = dir.join(SOL_PERCENT_SVG);
        draw_figure(
            &path,
            (
                &format!("Percent of the speed of light: cuBLAS bf16 GEMM, {gemm:.0} TFLOPS"),
                &subtitle,
            ),
            &panels,
            x,
        )?;
        written.push(path);
    }

    // Stage-to-stage speedups.
    let mut panels = Vec::new();
    let (mut lo, mut hi) = (1.0f64, 1.0f64);
    for &d in &dims {
        for &c in &causals {
            let series = speedup_series(rows, d, c);
            for s in &series {
                for &(_, v) in &s.points {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
            panels.push((d, c, series));
        }
    }
    if panels.iter().any(|(_, _, s)| !s.is_empty()) {
        let panels: Vec<Panel> = panels
            .into_iter()
            .map(|(d, c, series)| Panel {
                title: format!("head dim {d}, {}", causal_title(c)),
                y_desc: "speedup",
                series,
                y: YAxis::Log2 {
                    lo,
                    hi,
                    suffix: "x",
                    unit_line: true,
                },
            })
            .collect();
        let path = dir.join(SPEEDUPS_SVG);
        draw_figure(
            &path,
            ("Each stage over the one it builds on", &subtitle),
            &panels,
            x,
        )?;
        written.push(path);
    }

    let table = dir.join(RESULTS_TABLE_MD);
    std::fs::write(&table, results_table(res))
        .with_context(|| format!("writing {}", table.display()))?;
    written.push(table);

    // The ladder at a glance: a bar per stage on one shape, grouped by branch.
    written.extend(ladder::write(res, dir)?);
    Ok(written)
}

fn trim_float(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceiling(0.9), 1.0);
        assert_eq!(nice_ceiling(7.3), 8.0);
        assert_eq!(nice_ceiling(430.0), 500.0);
        assert_eq!(nice_ceiling(643.0), 800.0);
        assert_eq!(nice_ceiling(180.0), 200.0);
        assert_eq!(nice_ceiling(-1.0), 1.0);
    }

    /// Each figure of a committed run of record is the column's width, and its smallest
    /// text (font-size as written, which is what the page shows at 1:1) is MIN_TEXT_PX
    /// (give or take the rounding in `font`).
    #[test]
    fn figures_fit_the_column_with_readable_text() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let res =
            BenchResults::read(&root.join("bench/records/h100-prefill/sweep/bench.json")).unwrap();
        let dir = std::env::temp_dir().join(format!("flashlab-plots-{}", std::process::id()));
        let written = write_all(&res, &dir).unwrap();
        let svgs: Vec<&PathBuf> = written
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .collect();
        assert!(svgs.len() >= 3);
        for path in svgs {
            let svg = std::fs::read_to_string(path).unwrap();
            assert!(
                svg.starts_with(&format!("<svg width=\"{FIGURE_W}\"")),
                "{}",
                path.display()
            );
            let smallest = svg
                .split("font-size=\"")
                .skip(1)
                .map(|s| s.split('"').next().unwrap().parse::<f64>().unwrap())
                .fold(f64::INFINITY, f64::min);
            assert!(
                (MIN_TEXT_PX..MIN_TEXT_PX + 0.5).contains(&smallest),
                "{}: {smallest}",
                path.display()
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn axis_labels_drop_trailing_zeros() {
        assert_eq!(trim_float(2.50), "2.5");
        assert_eq!(trim_float(0.0), "0");
    }
}
