//! A measured timeline as a Gantt chart: one lane per warpgroup of a few blocks, each phase
//! of each iteration a coloured bar with its numbers on hover, a time axis in µs.
//!
//! The input is plain data ([`Chart`]): `flashlab timeline N` fills it from what the
//! kernels recorded (`harness::timeline`), so this crate needs nothing of the harness. A
//! lane has a main row and, above it, thin rows for spans that may overlap the main row's
//! (the tensor-core products, from issue to completion): stage 16 issues S of tile j
//! before P V of tile j - 1 completed, and runs the softmax under both.

use layout_viz::render;
use layout_viz::svg_kit::{
    CHAR_W_12 as CHAR_W, INK, MARGIN, MAX_WIDTH, MUTED, document, line, rect, text, wrap,
};
use svg::node::element::{Group, Title};

/// Everything the chart shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    /// Lines under the title (the problem, the GPU, the overhead), wrapped to fit.
    pub subtitle: Vec<String>,
    pub lanes: Vec<Lane>,
    /// The classes of the legend, in its order; a class without an entry is still drawn.
    pub legend: Vec<LegendEntry>,
    pub window: Window,
    /// Lines under the legend, wrapped to fit.
    pub notes: Vec<String>,
}

/// One warpgroup. Consecutive lanes with the same `group` (its block and SM) are drawn
/// under one heading.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// `block 0 · SM 17`
    pub group: String,
    /// `consumer 1`, `producer`: the lane's label.
    pub name: String,
    pub spans: Vec<Span>,
}

/// One phase of one iteration: a bar from `start_ns` to `end_ns`.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub start_ns: f64,
    pub end_ns: f64,
    /// The phase as the reader sees it: `QKᵀ`.
    pub phase: String,
    /// The K/V tile, or `None` for a phase outside the loop (the epilogue).
    pub iteration: Option<u32>,
    /// Picks the colour ([`class_colour`]) and is the bar's CSS class: `qk`.
    pub class: String,
    /// 0: the lane's main row; 1, 2, ...: the thin rows above it, 1 the topmost.
    pub sub_row: u8,
    /// Said after the duration on hover, in parentheses: `issue → complete`.
    pub note: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LegendEntry {
    pub class: String,
    pub label: String,
}

/// Which part of the run to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// From the first span's start to the last span's end.
    All,
    /// From the first start to the last end of the spans of tiles `first..end`, in every
    /// lane (a producer's loads of those tiles come well before their consumers' products).
    Tiles { first: u32, end: u32 },
}

/// The colour of each phase class `flashlab timeline` uses: the waits light (nothing
/// runs), the work saturated, the two products in blue and green. The backward's take the
/// forward's colours where they play the same part (its first products blue, its last
/// green, P recomputed orange like the softmax); dS and dQ's store and reduce their own.
pub const CLASS_COLOURS: [(&str, &str); 14] = [
    ("wait_empty", "#e7cba9"),
    ("load", "#8c564b"),
    ("wait_full", "#c7c7c7"),
    ("qk", "#1f77b4"),
    ("softmax", "#ff7f0e"),
    ("pv", "#2ca02c"),
    ("sync", "#f4a6a6"),
    ("epilogue", "#9467bd"),
    ("bwd_scores", "#1f77b4"),
    ("bwd_p", "#ff7f0e"),
    ("bwd_ds", "#e377c2"),
    ("bwd_grads", "#2ca02c"),
    ("dq_store", "#17becf"),
    ("dq_reduce", "#bcbd22"),
];

/// The fill of a class: [`CLASS_COLOURS`], else the palette entry of its place in the legend.
pub fn class_colour(class: &str, legend: &[LegendEntry]) -> &'static str {
    if let Some((_, colour)) = CLASS_COLOURS.iter().find(|(c, _)| *c == class) {
        return colour;
    }
    let i = legend
        .iter()
        .position(|e| e.class == class)
        .unwrap_or(legend.len());
    render::color(i as u64)
}

/// The span of time `window` covers, ns; `None` when no span falls in it.
pub fn window_range(lanes: &[Lane], window: Window) -> Option<(f64, f64)> {
    let inside = |s: &&Span| match window {
        Window::All => true,
        Window::Tiles { first, end } => s.iteration.is_some_and(|t| (first..end).contains(&t)),
    };
    let spans: Vec<&Span> = lanes.iter().flat_map(|l| &l.spans).filter(inside).collect();
    if spans.is_empty() {
        return None;
    }
    let start = spans
        .iter()
        .map(|s| s.start_ns)
        .fold(f64::INFINITY, f64::min);
    let end = spans
        .iter()
        .map(|s| s.end_ns)
        .fold(f64::NEG_INFINITY, f64::max);
    Some((start, end.max(start + 1.0)))
}

/// `812 ns`, `4.1 ns`, `1.23 µs`.
pub fn duration(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.1} ns")
    } else if ns < 1000.0 {
        format!("{ns:.0} ns")
    } else {
        format!("{:.2} µs", ns / 1000.0)
    }
}

/// A tick every `1`, `2` or `5` times a power of ten, about `target` of them over `span`.
pub fn tick_step(span: f64, target: u32) -> f64 {
    let raw = span / f64::from(target.max(1));
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

// Sizes: every text is 12px or more (14px the title) and the figure 740px wide, the
// book's column, so it is never scaled down.
const TITLE_CHAR_W: f64 = 8.5; // a 14px monospace character
const THIN_H: f64 = 7.0;
const MAIN_H: f64 = 16.0;
const LANE_GAP: f64 = 7.0;
const GROUP_H: f64 = 20.0;

/// The hover text of a span: `block 0 · SM 17 · consumer 1, tile 5: QKᵀ 812 ns (issue →
/// complete), 3.210 → 4.022 µs`.
pub fn hover(lane: &Lane, span: &Span) -> String {
    let tile = span
        .iteration
        .map_or_else(String::new, |t| format!(", tile {t}"));
    let note = if span.note.is_empty() {
        String::new()
    } else {
        format!(" ({})", span.note)
    };
    format!(
        "{} · {}{tile}: {} {}{note}, {:.3} → {:.3} µs",
        lane.group,
        lane.name,
        span.phase,
        duration(span.end_ns - span.start_ns),
        span.start_ns / 1000.0,
        span.end_ns / 1000.0
    )
}

/// The chart as an SVG document, 740px wide.
pub fn render(chart: &Chart) -> String {
    let width = MAX_WIDTH;
    let whole = window_range(&chart.lanes, Window::All);
    let (range, window_line) = match (chart.window, whole) {
        (_, None) => (None, "nothing was recorded".to_string()),
        (Window::All, Some(all)) => (
            Some(all),
            format!("the whole run: {} recorded", duration(all.1 - all.0)),
        ),
        (Window::Tiles { first, end }, Some(all)) => {
            let tiles = chart
                .lanes
                .iter()
                .flat_map(|l| &l.spans)
                .filter_map(|s| s.iteration)
                .max()
                .map_or(0, |t| t + 1);
            match window_range(&chart.lanes, chart.window) {
                Some(w) => (
                    Some(w),
                    format!(
                        "tiles {first}–{} of {tiles}: {} shown of {} recorded",
                        end.min(tiles).saturating_sub(1),
                        duration(w.1 - w.0),
                        duration(all.1 - all.0)
                    ),
                ),
                None => (
                    Some(all),
                    format!(
                        "no tile in {first}..{end} (the run has {tiles}): the whole run, {}",
                        duration(all.1 - all.0)
                    ),
                ),
            }
        }
    };

    let mut body = Group::new();
    let mut y = MARGIN;
    for line in wrap(
        &chart.title,
        ((width - 2.0 * MARGIN) / TITLE_CHAR_W) as usize,
    ) {
        y += 17.0;
        body = body.add(text(MARGIN, y, 14, line).set("font-weight", "bold"));
    }
    let per_line = ((width - 2.0 * MARGIN) / CHAR_W) as usize;
    for sub in chart.subtitle.iter().chain([&window_line]) {
        for line in wrap(sub, per_line) {
            y += 16.0;
            body = body.add(text(MARGIN, y, 12, line));
        }
    }
    y += 10.0;

    let label_chars = chart
        .lanes
        .iter()
        .map(|l| l.name.chars().count())
        .max()
        .unwrap_or(0);
    let x0 = MARGIN + (label_chars as f64 * CHAR_W + 12.0).max(70.0);
    let x1 = width - MARGIN;
    let thin_rows = chart
        .lanes
        .iter()
        .flat_map(|l| &l.spans)
        .map(|s| s.sub_row)
        .max()
        .unwrap_or(0);
    let main_top = f64::from(thin_rows) * (THIN_H + 1.0);
    let lane_h = main_top + MAIN_H;
    let (t0, t1) = range.unwrap_or((0.0, 1.0));
    let x_of = |ns: f64| x0 + (ns - t0) / (t1 - t0) * (x1 - x0);

    let mut backgrounds = Group::new();
    let mut bars = Group::new();
    let plot_top = y;
    let mut group: Option<&str> = None;
    for lane in &chart.lanes {
        if group != Some(lane.group.as_str()) {
            group = Some(&lane.group);
            body = body
                .add(text(MARGIN, y + 14.0, 12, lane.group.as_str()).set("font-weight", "bold"));
            y += GROUP_H;
        }
        body = body.add(
            text(
                x0 - 8.0,
                y + main_top + MAIN_H / 2.0 + 4.5,
                12,
                lane.name.as_str(),
            )
            .set("text-anchor", "end"),
        );
        backgrounds = backgrounds.add(rect(x0, y, x1 - x0, lane_h, "#f4f4f4"));
        for span in &lane.spans {
            if range.is_none() || span.end_ns <= t0 || span.start_ns >= t1 {
                continue;
            }
            let (a, b) = (x_of(span.start_ns.max(t0)), x_of(span.end_ns.min(t1)));
            let (row_y, row_h) = if span.sub_row == 0 {
                (y + main_top, MAIN_H)
            } else {
                (y + f64::from(span.sub_row - 1) * (THIN_H + 1.0), THIN_H)
            };
            bars = bars.add(
                rect(
                    a,
                    row_y,
                    (b - a).max(0.5),
                    row_h,
                    class_colour(&span.class, &chart.legend),
                )
                .set("class", format!("span {}", span.class))
                .add(Title::new(hover(lane, span))),
            );
        }
        y += lane_h + LANE_GAP;
    }
    let plot_bottom = y - LANE_GAP + 4.0;

    // The axis: gridlines behind the bars, ticks and their labels in µs below.
    let mut grid = Group::new();
    if range.is_some() {
        let step = tick_step(t1 - t0, 6);
        let decimals = (-(step / 1000.0).log10()).ceil().clamp(0.0, 3.0) as usize;
        let mut k = (t0 / step).ceil();
        while k * step <= t1 + step * 1e-9 {
            let x = x_of(k * step);
            grid = grid.add(line(x, plot_top, x, plot_bottom, "#dddddd", 1.0));
            body = body
                .add(line(x, plot_bottom, x, plot_bottom + 4.0, INK, 1.0))
                .add(
                    text(
                        x,
                        plot_bottom + 17.0,
                        12,
                        format!("{:.decimals$}", k * step / 1000.0),
                    )
                    .set("text-anchor", "middle"),
                );
            k += 1.0;
        }
    }
    body = body.add(line(x0, plot_bottom, x1, plot_bottom, INK, 1.0));
    y = plot_bottom + 34.0;
    body = body.add(
        text(x1, y, 12, "µs since the first recorded warpgroup started")
            .set("text-anchor", "end")
            .set("fill", MUTED),
    );
    y += 14.0;

    // The legend: every class drawn, in the legend's order, then any it lacks.
    let mut classes: Vec<(String, String)> = chart
        .legend
        .iter()
        .map(|e| (e.class.clone(), e.label.clone()))
        .collect();
    for span in chart.lanes.iter().flat_map(|l| &l.spans) {
        if !classes.iter().any(|(c, _)| *c == span.class) {
            classes.push((span.class.clone(), span.phase.clone()));
        }
    }
    let mut x = MARGIN;
    for (class, label) in &classes {
        let w = 18.0 + label.chars().count() as f64 * CHAR_W + 16.0;
        if x + w > x1 + 16.0 {
            x = MARGIN;
            y += 20.0;
        }
        body = body
            .add(
                rect(x, y, 12.0, 12.0, class_colour(class, &chart.legend))
                    .set("class", format!("legend {class}"))
                    .set("stroke", INK)
                    .set("stroke-width", 0.5),
            )
            .add(text(x + 18.0, y + 10.5, 12, label.as_str()));
        x += w;
    }
    y += 12.0;
    for note in &chart.notes {
        for line in wrap(note, per_line) {
            y += 16.0;
            body = body.add(text(MARGIN, y, 12, line).set("fill", MUTED));
        }
    }
    let height = (y + MARGIN).ceil();
    let figure = Group::new().add(backgrounds).add(grid).add(bars).add(body);
    document(width, height, &chart.title, figure)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(
        class: &str,
        phase: &str,
        tile: Option<u32>,
        start: f64,
        end: f64,
        sub_row: u8,
    ) -> Span {
        Span {
            start_ns: start,
            end_ns: end,
            phase: phase.into(),
            iteration: tile,
            class: class.into(),
            sub_row,
            note: if sub_row > 0 {
                "issue → complete".into()
            } else {
                String::new()
            },
        }
    }

    /// A stage-11-like lane: per tile, wait full 100 ns, QKᵀ 300, softmax 200, P·V 400
    /// (1 µs a tile, from `start`), then an epilogue of 500 ns.
    fn lane(group: &str, name: &str, tiles: u32, start: f64) -> Lane {
        let mut spans = Vec::new();
        let mut t0 = start;
        for t in 0..tiles {
            spans.push(span("wait_full", "wait full", Some(t), t0, t0 + 100.0, 0));
            spans.push(span("qk", "QKᵀ", Some(t), t0 + 100.0, t0 + 400.0, 1));
            spans.push(span(
                "softmax",
                "softmax",
                Some(t),
                t0 + 400.0,
                t0 + 600.0,
                0,
            ));
            spans.push(span("pv", "P·V", Some(t), t0 + 600.0, t0 + 1000.0, 2));
            t0 += 1000.0;
        }
        spans.push(span("epilogue", "epilogue", None, t0, t0 + 500.0, 0));
        Lane {
            group: group.into(),
            name: name.into(),
            spans,
        }
    }

    fn chart(window: Window) -> Chart {
        Chart {
            title: "stage 11 (wgmma): a measured timeline".into(),
            subtitle: vec!["batch 1 heads 2 seqlen 1024 dim 128 bf16".into()],
            lanes: vec![
                lane("block 0 · SM 0", "consumer 0", 8, 0.0),
                lane("block 0 · SM 0", "consumer 1", 8, 50.0),
                lane("block 1 · SM 2", "consumer 0", 8, 120.0),
            ],
            legend: ["wait_full", "qk", "softmax", "pv", "epilogue"]
                .iter()
                .map(|c| LegendEntry {
                    class: c.to_string(),
                    label: c.replace('_', " "),
                })
                .collect(),
            window,
            notes: vec![
                "QKᵀ and P·V on the thin rows above each lane, from issue to completion.".into(),
            ],
        }
    }

    /// The content of every `<text>`, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .map(|t| {
                let inner = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                inner.trim().to_string()
            })
            .collect()
    }

    fn count(svg: &str, class: &str) -> usize {
        svg.matches(&format!("class=\"span {class}\"")).count()
    }

    fn assert_readable(svg: &str) {
        assert!(svg.contains(r#"width="740""#), "{}", &svg[..200]);
        assert!(svg.contains(r#"viewBox="0 0 740 "#));
        for (i, _) in svg.match_indices("font-size=\"") {
            let size: u32 = svg[i + 11..].split('"').next().unwrap().parse().unwrap();
            assert!(size >= 12, "font-size {size}");
        }
    }

    #[test]
    fn the_whole_run_has_a_bar_per_span_with_its_hover_text() {
        let svg = render(&chart(Window::All));
        assert_readable(&svg);
        for class in ["wait_full", "qk", "softmax", "pv"] {
            assert_eq!(count(&svg, class), 3 * 8, "{class}");
        }
        assert_eq!(count(&svg, "epilogue"), 3);
        assert!(svg.contains(
            "<title>block 0 · SM 0 · consumer 1, tile 5: QKᵀ 300 ns (issue → complete), 5.150 → 5.450 µs</title>"
        ));
        assert!(svg.contains(
            "<title>block 1 · SM 2 · consumer 0: epilogue 500 ns, 8.120 → 8.620 µs</title>"
        ));
        let texts = texts(&svg);
        let has = |t: &str| texts.iter().filter(|x| *x == t).count();
        // Each block's heading once, each lane's label.
        assert_eq!(has("block 0 · SM 0"), 1);
        assert_eq!(has("block 1 · SM 2"), 1);
        assert_eq!(has("consumer 0"), 2);
        assert_eq!(has("consumer 1"), 1);
        assert_eq!(has("µs since the first recorded warpgroup started"), 1);
        assert_eq!(has("the whole run: 8.62 µs recorded"), 1);
        // 8.62 µs in steps of 2 µs: 0, 2, 4, 6, 8.
        for tick in ["0", "2", "4", "6", "8"] {
            assert_eq!(has(tick), 1, "tick {tick}");
        }
        assert_eq!(has("10"), 0);
        for class in ["wait_full", "qk", "softmax", "pv", "epilogue"] {
            assert!(
                svg.contains(&format!("class=\"legend {class}\"")),
                "{class}"
            );
        }
    }

    #[test]
    fn products_go_on_the_thin_rows_above_the_main_row() {
        let svg = render(&chart(Window::All));
        // An attribute of the first bar of a class.
        let attribute = |class: &str, name: &str| -> f64 {
            let i = svg.find(&format!("class=\"span {class}\"")).unwrap();
            let start = svg[..i].rfind('<').unwrap();
            let tag = &svg[start..i + svg[i..].find('>').unwrap()];
            let value = tag.split(&format!(" {name}=\"")).nth(1).unwrap();
            value.split('"').next().unwrap().parse().unwrap()
        };
        let y_of = |class: &str| attribute(class, "y");
        let height = |class: &str| attribute(class, "height");
        let (qk, pv, main) = (y_of("qk"), y_of("pv"), y_of("softmax"));
        assert!(qk < pv && pv < main, "{qk} {pv} {main}");
        assert_eq!(
            (height("qk"), height("pv"), height("softmax")),
            (THIN_H, THIN_H, MAIN_H)
        );
        assert_eq!(y_of("wait_full"), main);
    }

    #[test]
    fn a_window_of_tiles_draws_those_tiles() {
        let svg = render(&chart(Window::Tiles { first: 2, end: 4 }));
        assert_readable(&svg);
        // Tiles 2 and 3 of each lane, and what overlaps their time, clipped: lanes 1 and 2
        // start 50 and 120 ns later, so their tile 1's P·V ends inside the window (2.0 to
        // 4.12 µs), and the first bars of tile 4 of lanes 0 and 1 begin inside it.
        assert_eq!(count(&svg, "wait_full"), 3 * 2 + 2);
        assert_eq!(count(&svg, "qk"), 3 * 2 + 1);
        assert_eq!(count(&svg, "softmax"), 3 * 2);
        assert_eq!(count(&svg, "pv"), 3 * 2 + 2);
        assert_eq!(count(&svg, "epilogue"), 0);
        let said = |svg: &str, line: &str| texts(svg).iter().any(|t| t == line);
        assert!(said(
            &svg,
            "tiles 2–3 of 8: 2.12 µs shown of 8.62 µs recorded"
        ));
        assert_eq!(
            window_range(
                &chart(Window::All).lanes,
                Window::Tiles { first: 2, end: 4 }
            ),
            Some((2000.0, 4120.0))
        );

        let past = render(&chart(Window::Tiles { first: 20, end: 26 }));
        assert!(said(
            &past,
            "no tile in 20..26 (the run has 8): the whole run, 8.62 µs"
        ));
        assert_eq!(count(&past, "qk"), 24);
    }

    #[test]
    fn long_titles_wrap_inside_the_column() {
        let mut c = chart(Window::All);
        c.subtitle = vec!["word ".repeat(60)];
        let svg = render(&c);
        assert_readable(&svg);
        let texts = texts(&svg);
        assert_eq!(
            texts.iter().filter(|t| t.starts_with("word word")).count(),
            4
        );
        let longest = texts.iter().map(|t| t.chars().count()).max().unwrap();
        assert!(
            longest as f64 * CHAR_W <= MAX_WIDTH - 2.0 * MARGIN,
            "{longest}"
        );
    }

    #[test]
    fn ticks_and_durations() {
        assert_eq!(tick_step(8620.0, 6), 2000.0);
        assert_eq!(tick_step(1000.0, 5), 200.0);
        assert_eq!(tick_step(60.0, 6), 10.0);
        assert_eq!(tick_step(7.0, 6), 2.0);
        assert_eq!(duration(4.14), "4.1 ns");
        assert_eq!(duration(812.4), "812 ns");
        assert_eq!(duration(1234.0), "1.23 µs");
    }

    #[test]
    fn classes_take_their_colours() {
        let legend = vec![LegendEntry {
            class: "custom".into(),
            label: "custom".into(),
        }];
        assert_eq!(class_colour("qk", &legend), "#1f77b4");
        assert_eq!(class_colour("custom", &legend), render::color(0));
        assert_eq!(class_colour("unknown", &legend), render::color(1));
    }
}
