//! `flashlab timeline N`'s pieces that need no GPU: a recorded [`Timeline`] as
//! protocol-viz's chart data, the phase summary as text, and the overhead.

use harness::backward::check::BackwardCheck;
use harness::check::CheckReport;
use harness::timeline::{Lane, Phase, PhaseStat, Role, Timeline, summarize};
use harness::timing::Timing;
use harness::{Problem, StageInfo};
use protocol_viz::timeline::{Chart, LegendEntry, Span, Window, duration};
use serde::Serialize;
use std::collections::BTreeSet;

/// How a phase is drawn: its thin row above the lane for the products (QKᵀ on top, P·V
/// under it: in stage 16 they overlap each other and the softmax; in the backward Sᵀ/dPᵀ
/// on top, dV/dK/dQ under it, overlapping each other, Pᵀ and dSᵀ), the lane's own row for
/// the rest.
pub fn sub_row(phase: Phase) -> u8 {
    match phase {
        Phase::Qk | Phase::BwdScores => 1,
        Phase::Pv | Phase::BwdGrads => 2,
        _ => 0,
    }
}

/// What the hover text says a span measures, beyond its name.
pub fn note(phase: Phase) -> &'static str {
    if phase.is_gemm() {
        "issue → complete"
    } else {
        ""
    }
}

/// One recorded warpgroup as a lane: `block 0 · SM 17`, `consumer 1`.
pub fn lane(l: &Lane) -> protocol_viz::timeline::Lane {
    protocol_viz::timeline::Lane {
        group: format!("block {} · SM {}", l.block, l.sm),
        name: l.name(),
        spans: l
            .spans
            .iter()
            .map(|s| Span {
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                phase: s.phase.label().to_string(),
                // The epilogue records the number of tiles: it is not an iteration.
                iteration: (s.phase != Phase::Epilogue).then_some(s.iteration),
                class: s.phase.name().to_string(),
                sub_row: sub_row(s.phase),
                note: note(s.phase).to_string(),
            })
            .collect(),
    }
}

/// The chart of `timeline`: its lanes, a legend of the phases recorded (in
/// timeline.cuh's order), and notes on how to read it and on anything cut short.
pub fn chart(timeline: &Timeline, title: String, subtitle: Vec<String>, window: Window) -> Chart {
    let recorded = |p: &Phase| {
        timeline
            .lanes
            .iter()
            .any(|l| l.spans.iter().any(|s| s.phase == *p))
    };
    let legend = Phase::ALL
        .iter()
        .filter(|p| **p != Phase::Clock && recorded(p))
        .map(|p| LegendEntry {
            class: p.name().to_string(),
            label: p.label().to_string(),
        })
        .collect();
    let mut notes = vec![
        products_note(timeline),
        "Cycles become ns through the %globaltimer and clock64 pairs each warpgroup records at its start and end: one line per SM, whose warpgroups stay exactly in step, so blocks on different SMs share one time axis (to within a %globaltimer step).".to_string(),
    ];
    notes.extend(timeline.truncated().map(|l| {
        format!(
            "block {} warpgroup {} filled its {} event slots: its later events are missing.",
            l.block, l.warpgroup, timeline.stride
        )
    }));
    Chart {
        title,
        subtitle,
        lanes: timeline.lanes.iter().map(lane).collect(),
        legend,
        window,
        notes,
    }
}

/// The chart's first note: which products are drawn on the thin rows, named as recorded
/// (QKᵀ and P·V in the forward, Sᵀ/dPᵀ and dV/dK/dQ in the backward).
fn products_note(timeline: &Timeline) -> String {
    let mut products: Vec<Phase> = Phase::ALL
        .into_iter()
        .filter(|p| p.is_gemm())
        .filter(|p| {
            timeline
                .lanes
                .iter()
                .any(|l| l.spans_of(*p).next().is_some())
        })
        .collect();
    if products.is_empty() {
        products = vec![Phase::Qk, Phase::Pv];
    }
    products.sort_by_key(|p| sub_row(*p));
    let labels: Vec<&str> = products.iter().map(|p| p.label()).collect();
    let named = match labels.as_slice() {
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        [] => unreachable!("filled above"),
    };
    format!(
        "{named} are drawn from issue to completion on the thin rows above each lane ({} on top), every other phase on the lane's own row; hover over a bar for its numbers.",
        labels[0]
    )
}

/// `2 warpgroups`, or for the backward, whose load and dQ writer are warps, `4 lanes`.
fn lanes_recorded(timeline: &Timeline) -> String {
    let n = timeline.lanes.len();
    if timeline
        .lanes
        .iter()
        .any(|l| matches!(l.role, Role::Writer | Role::Mma))
    {
        format!("{n} lanes (warps and warpgroups)")
    } else {
        format!("{n} warpgroups")
    }
}

/// How much slower the timeline kernel ran than the timed one, in percent.
pub fn overhead_percent(timed_ms: f64, timeline_ms: f64) -> f64 {
    (timeline_ms / timed_ms - 1.0) * 100.0
}

/// The head of [`summary_lines`]' columns.
pub fn summary_header() -> String {
    format!(
        "{:<9} {:<11} {:>6}   {:>10}  {:>6}",
        "role", "phase", "count", "mean", "share"
    )
}

/// The phase summary, a line per (role, phase): count, mean, share of the role's time.
pub fn summary_lines(stats: &[PhaseStat]) -> Vec<String> {
    stats
        .iter()
        .map(|s| {
            format!(
                "{:<9} {:<11} {:>6} x {:>10}  {:>5.1}%",
                s.role.name(),
                s.phase.label(),
                s.count,
                protocol_viz::timeline::duration(s.mean_ns),
                100.0 * s.share
            )
        })
        .collect()
}

/// The check of the run that recorded: O and the LSE against the oracle for a prefill
/// stage, dQ, dK and dV against the f64 backward for a backward stage.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(untagged)]
pub enum RunCheck<'a> {
    Prefill(&'a CheckReport),
    Backward(&'a BackwardCheck),
}

impl RunCheck<'_> {
    pub fn passed(&self) -> bool {
        match self {
            RunCheck::Prefill(c) => c.passed,
            RunCheck::Backward(c) => c.passed,
        }
    }

    pub fn summary(&self) -> String {
        match self {
            RunCheck::Prefill(c) => c.summary(),
            RunCheck::Backward(c) => c.summary(),
        }
    }
}

/// What `flashlab timeline` brought back from the GPU: the timed kernel's timing, the
/// timeline kernel's check, timing and events.
pub struct Runs<'a> {
    pub info: &'a StageInfo,
    pub gpu: &'a str,
    pub problem: Problem,
    pub seed: u64,
    pub check: Option<RunCheck<'a>>,
    /// The timed kernel's, and the timeline kernel's (`None` under `--no-time`).
    pub timed: Option<&'a Timing>,
    pub recorded: Option<&'a Timing>,
    pub timeline: &'a Timeline,
    /// Blocks asked for (the grid may have fewer).
    pub blocks: u32,
}

/// What `flashlab timeline` prints after its check line, warns about, and writes.
pub struct Report {
    pub lines: Vec<String>,
    pub warnings: Vec<String>,
    pub svg: String,
    /// `--json`: the runs, the summary and every event.
    pub json: serde_json::Value,
}

#[derive(Serialize)]
struct Json<'a> {
    stage: u32,
    slug: &'a str,
    gpu: &'a str,
    problem: Problem,
    seed: u64,
    timed_ms: Option<f64>,
    timeline_ms: Option<f64>,
    overhead_percent: Option<f64>,
    check: Option<RunCheck<'a>>,
    summary: &'a [PhaseStat],
    timeline: &'a Timeline,
}

/// The overhead, what was recorded, the phase summary, the chart of `window` and the JSON.
pub fn report(runs: &Runs, window: Window) -> Report {
    let t = runs.timeline;
    let mut lines = Vec::new();
    let overhead = match (runs.timed, runs.recorded) {
        (Some(a), Some(b)) => {
            let overhead = overhead_percent(a.median_ms, b.median_ms);
            let ungated = match a.protocol {
                harness::timing::TimingProtocol::Gated => "",
                harness::timing::TimingProtocol::Ungated => ", ungated: host launch time included",
            };
            lines.push(format!(
                "time     timed kernel {:.4} ms, timeline kernel {:.4} ms (medians of {} and {}){ungated}",
                a.median_ms, b.median_ms, a.iterations, b.iterations
            ));
            lines.push(format!(
                "instrumentation overhead: {overhead:+.1}% (timed {:.4} ms, timeline {:.4} ms)",
                a.median_ms, b.median_ms
            ));
            Some(overhead)
        }
        _ => None,
    };

    let blocks: BTreeSet<(u32, u16)> = t.lanes.iter().map(|l| (l.block, l.sm)).collect();
    // Each SM's own measure of its cycle length, beside the GPU's pooled one.
    let per_sm: Vec<f64> = t
        .lanes
        .iter()
        .filter_map(|l| Some((l.sm, l.sm_ghz?)))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_values()
        .collect();
    let clock = match (
        per_sm.iter().copied().reduce(f64::min),
        per_sm.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!(
            "SM clock {:.2} GHz (cycles against %globaltimer; {lo:.2} to {hi:.2} per SM)",
            1.0 / t.ns_per_cycle
        ),
        _ => format!("SM clock {:.2} GHz", 1.0 / t.ns_per_cycle),
    };
    let where_: Vec<String> = blocks
        .iter()
        .map(|(b, sm)| format!("block {b} on SM {sm}"))
        .collect();
    lines.push(format!(
        "recorded {}: {}, {} spans over {}, {clock}",
        if where_.is_empty() {
            "nothing".to_string()
        } else {
            where_.join(", ")
        },
        lanes_recorded(t),
        t.lanes.iter().map(|l| l.spans.len()).sum::<usize>(),
        duration(t.duration_ns()),
    ));
    let mut warnings = Vec::new();
    if blocks.len() < runs.blocks as usize {
        warnings.push(format!(
            "{} of the {} blocks asked for were recorded: the grid has no more",
            blocks.len(),
            runs.blocks
        ));
    }
    warnings.extend(t.truncated().map(|l| {
        format!(
            "block {} warpgroup {} filled its {} event slots: its later events are missing",
            l.block, l.warpgroup, t.stride
        )
    }));
    let summary = summarize(t);
    lines.push(format!(
        "phases   {}   (share: of the role's recorded time; the products may overlap the rest)",
        summary_header()
    ));
    lines.extend(
        summary_lines(&summary)
            .into_iter()
            .map(|l| format!("         {l}")),
    );

    let mut subtitle = vec![format!("{} · {}", runs.problem, runs.gpu)];
    if let (Some(o), Some(a), Some(b)) = (overhead, runs.timed, runs.recorded) {
        subtitle.push(format!(
            "instrumentation overhead {o:+.1}% (medians: timed {:.4} ms, timeline {:.4} ms)",
            a.median_ms, b.median_ms
        ));
    }
    let chart = chart(
        t,
        format!(
            "Stage {} ({}): a measured timeline",
            runs.info.number, runs.info.slug
        ),
        subtitle,
        window,
    );
    let json = Json {
        stage: runs.info.number,
        slug: runs.info.slug,
        gpu: runs.gpu,
        problem: runs.problem,
        seed: runs.seed,
        timed_ms: runs.timed.map(|t| t.median_ms),
        timeline_ms: runs.recorded.map(|t| t.median_ms),
        overhead_percent: overhead,
        check: runs.check,
        summary: &summary,
        timeline: t,
    };
    Report {
        lines,
        warnings,
        svg: protocol_viz::timeline::render(&chart),
        json: serde_json::to_value(&json).expect("plain numbers and strings"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::timeline::{RawEvent, TimelineBuffer, summarize};

    /// Block 0 with a producer (warpgroup 0) and a consumer (1), 2 tiles, at 1 GHz.
    fn timeline(stride: u32) -> Timeline {
        let e = |wg: u8, phase: Phase, iteration: u32, start: u64, end: u64| RawEvent {
            start,
            end,
            block: 0,
            iteration,
            sm: 17,
            warpgroup: wg,
            phase: phase as u8,
        };
        let producer = [
            e(0, Phase::Clock, 0, 5_000, 100),
            e(0, Phase::Load, 0, 110, 150),
            e(0, Phase::WaitEmpty, 1, 150, 160),
            e(0, Phase::Load, 1, 160, 200),
            e(0, Phase::Clock, 0, 5_200, 300),
        ];
        // One SM, one counter: the consumer's cycles follow the producer's.
        let mut consumer = vec![e(1, Phase::Clock, 0, 5_000, 100)];
        for t in 0..2u32 {
            let c = 200 + 1_000 * u64::from(t);
            consumer.push(e(1, Phase::WaitFull, t, c, c + 100));
            consumer.push(e(1, Phase::Qk, t, c + 100, c + 400));
            consumer.push(e(1, Phase::Softmax, t, c + 400, c + 600));
            consumer.push(e(1, Phase::Pv, t, c + 600, c + 1_000));
        }
        consumer.push(e(1, Phase::Epilogue, 2, 2_200, 2_500));
        consumer.push(e(1, Phase::Clock, 0, 7_500, 2_600));
        let mut buf = TimelineBuffer::zeroed(1, stride);
        buf.put_slot(0, 0, &producer);
        buf.put_slot(0, 1, &consumer);
        Timeline::from_buffer(&buf).unwrap()
    }

    #[test]
    fn lanes_name_the_block_sm_and_role_and_put_the_products_above() {
        let c = chart(&timeline(32), "t".into(), vec![], Window::All);
        let names: Vec<(&str, &str)> = c
            .lanes
            .iter()
            .map(|l| (l.group.as_str(), l.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("block 0 · SM 17", "producer"),
                ("block 0 · SM 17", "consumer 1")
            ]
        );
        let consumer = &c.lanes[1];
        let qk = &consumer.spans[1];
        assert_eq!(
            (
                qk.phase.as_str(),
                qk.class.as_str(),
                qk.sub_row,
                qk.iteration
            ),
            ("QKᵀ", "qk", 1, Some(0))
        );
        assert_eq!((qk.start_ns, qk.end_ns), (200.0, 500.0));
        assert_eq!(qk.note, "issue → complete");
        let pv = &consumer.spans[3];
        assert_eq!((pv.sub_row, pv.class.as_str()), (2, "pv"));
        let epilogue = consumer.spans.last().unwrap();
        assert_eq!((epilogue.sub_row, epilogue.iteration), (0, None));
        assert_eq!(epilogue.note, "");
        // The legend: the phases recorded, in timeline.cuh's order; no sync, no clock.
        let legend: Vec<&str> = c.legend.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            legend,
            [
                "wait empty",
                "load",
                "wait full",
                "QKᵀ",
                "softmax",
                "P·V",
                "epilogue"
            ]
        );
        assert_eq!(c.notes.len(), 2);
        let svg = protocol_viz::timeline::render(&c);
        assert!(svg.contains(
            "block 0 · SM 17 · consumer 1, tile 1: QKᵀ 300 ns (issue → complete), 1.200 → 1.500 µs"
        ));
    }

    #[test]
    fn a_cut_slot_is_noted_under_the_chart() {
        let c = chart(&timeline(8), "t".into(), vec![], Window::All);
        assert_eq!(c.notes.len(), 3);
        assert_eq!(
            c.notes[2],
            "block 0 warpgroup 1 filled its 8 event slots: its later events are missing."
        );
    }

    #[test]
    fn the_summary_has_a_line_per_role_and_phase() {
        let lines = summary_lines(&summarize(&timeline(32)));
        assert_eq!(lines.len(), 2 + 5);
        let header = summary_header();
        assert_eq!(header, "role      phase        count         mean   share");
        assert_eq!(
            lines[0],
            "producer  wait empty       1 x      10 ns    5.0%"
        );
        assert_eq!(
            lines[1],
            "producer  load             2 x      40 ns   40.0%"
        );
        // The consumer's 2500 ns: QKᵀ 2 x 300 of them.
        let qk = "consumer  QKᵀ              2 x     300 ns   24.0%";
        assert!(lines.iter().any(|l| l == qk), "{lines:#?}");
        for line in &lines {
            assert_eq!(line.chars().count(), header.chars().count(), "{line}");
        }
    }

    #[test]
    fn the_report_says_the_overhead_what_was_recorded_and_draws_it() {
        use harness::timing::{Timing, TimingProtocol};
        let timing = |median_ms, iterations| Timing {
            median_ms,
            min_ms: median_ms,
            max_ms: median_ms,
            iterations,
            protocol: TimingProtocol::Gated,
        };
        let (timed, recorded) = (timing(2.0, 100), timing(2.05, 90));
        let t = timeline(32);
        let mut runs = Runs {
            info: crate::stages::find(11).unwrap().info(),
            gpu: "NVIDIA H100 80GB HBM3",
            problem: Problem::new(1, 2, 256, 128),
            seed: 7,
            check: None,
            timed: Some(&timed),
            recorded: Some(&recorded),
            timeline: &t,
            blocks: 2,
        };
        let r = report(&runs, Window::All);
        assert_eq!(
            r.lines[..3],
            [
                "time     timed kernel 2.0000 ms, timeline kernel 2.0500 ms (medians of 100 and 90)",
                "instrumentation overhead: +2.5% (timed 2.0000 ms, timeline 2.0500 ms)",
                "recorded block 0 on SM 17: 2 warpgroups, 12 spans over 2.50 µs, SM clock 1.00 GHz (cycles against %globaltimer; 1.00 to 1.00 per SM)",
            ]
        );
        assert!(
            r.lines[3].starts_with("phases   role      phase"),
            "{}",
            r.lines[3]
        );
        assert_eq!(r.lines.len(), 4 + 7);
        assert_eq!(
            r.warnings,
            ["1 of the 2 blocks asked for were recorded: the grid has no more"]
        );
        assert!(r.svg.contains("Stage 11 (wgmma): a measured timeline"));
        assert!(r.svg.contains(
            "instrumentation overhead +2.5% (medians: timed 2.0000 ms, timeline 2.0500 ms)"
        ));
        assert_eq!(r.svg.matches("class=\"span qk\"").count(), 2);
        assert!((r.json["overhead_percent"].as_f64().unwrap() - 2.5).abs() < 1e-9);
        assert_eq!(r.json["seed"], 7);
        assert_eq!(r.json["summary"].as_array().unwrap().len(), 7);
        let qk = &r.json["timeline"]["lanes"][1]["spans"][1];
        assert_eq!(
            (qk["phase"].as_str(), qk["start_ns"].as_f64()),
            (Some("qk"), Some(200.0))
        );
        assert_eq!(r.json["timeline"]["lanes"][0]["role"], "producer");

        // Without timing: no times, no overhead, the events of the first launch.
        runs.timed = None;
        runs.recorded = None;
        runs.blocks = 1;
        let r = report(&runs, Window::Tiles { first: 0, end: 1 });
        assert!(
            r.lines[0].starts_with("recorded block 0 on SM 17"),
            "{}",
            r.lines[0]
        );
        assert!(r.warnings.is_empty());
        assert!(r.json["overhead_percent"].is_null());
        assert_eq!(r.svg.matches("class=\"span qk\"").count(), 1);
    }

    /// Block 0 of a backward (stage 23's slots: 0 the load warp, 1 the dQ writer, 2 and 3
    /// the MMA warpgroups), 2 steps of 1000 cycles at 1 GHz.
    fn backward() -> Timeline {
        let e = |wg: u8, phase: Phase, iteration: u32, start: u64, end: u64| RawEvent {
            start,
            end,
            block: 0,
            iteration,
            sm: 5,
            warpgroup: wg,
            phase: phase as u8,
        };
        let mut buf = TimelineBuffer::zeroed(1, 32);
        let clocks = |wg: u8, mut events: Vec<RawEvent>| {
            events.insert(0, e(wg, Phase::Clock, 0, 1_000, 100));
            events.push(e(wg, Phase::Clock, 0, 3_500, 2_600));
            events
        };
        let mut load = Vec::new();
        let mut writer = Vec::new();
        for k in 0..2u32 {
            let c = 110 + 1_000 * u64::from(k);
            load.extend([
                e(0, Phase::WaitEmpty, k, c, c + 10),
                e(0, Phase::Load, k, c + 10, c + 50),
            ]);
            writer.extend([
                e(1, Phase::Sync, k, c + 90, c + 990),
                e(1, Phase::DqReduce, k, c + 990, c + 1_030),
            ]);
        }
        buf.put_slot(0, 0, &clocks(0, load));
        buf.put_slot(0, 1, &clocks(1, writer));
        for wg in 2..4u8 {
            let mut mma = Vec::new();
            for k in 0..2u32 {
                let c = 200 + 1_000 * u64::from(k);
                mma.extend([
                    e(wg, Phase::WaitFull, k, c, c + 20),
                    e(wg, Phase::BwdP, k, c + 150, c + 300),
                    e(wg, Phase::BwdScores, k, c + 20, c + 400),
                    e(wg, Phase::BwdDs, k, c + 400, c + 550),
                    e(wg, Phase::Sync, k, c + 560, c + 600),
                    e(wg, Phase::BwdGrads, k, c + 300, c + 850),
                    e(wg, Phase::Sync, k, c + 850, c + 900),
                    e(wg, Phase::DqStore, k, c + 900, c + 990),
                ]);
            }
            mma.push(e(wg, Phase::Epilogue, 2, 2_200, 2_500));
            buf.put_slot(0, u32::from(wg), &clocks(wg, mma));
        }
        Timeline::from_buffer(&buf).unwrap()
    }

    #[test]
    fn a_backward_chart_names_its_lanes_and_puts_its_products_above() {
        let t = backward();
        let c = chart(&t, "t".into(), vec![], Window::All);
        let names: Vec<&str> = c.lanes.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["producer", "dQ writer", "MMA 0", "MMA 1"]);
        let mma = &c.lanes[2];
        let row = |class: &str| {
            let s = mma.spans.iter().find(|s| s.class == class).unwrap();
            (s.sub_row, s.note.as_str())
        };
        assert_eq!(row("bwd_scores"), (1, "issue → complete"));
        assert_eq!(row("bwd_grads"), (2, "issue → complete"));
        for class in ["wait_full", "bwd_p", "bwd_ds", "sync", "dq_store"] {
            assert_eq!(row(class), (0, ""), "{class}");
        }
        let legend: Vec<&str> = c.legend.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            legend,
            [
                "wait empty",
                "load",
                "wait full",
                "sync",
                "epilogue",
                "Sᵀ/dPᵀ",
                "Pᵀ",
                "dSᵀ",
                "dV/dK/dQ",
                "dQ store",
                "dQ reduce"
            ]
        );
        assert!(c.notes[0].starts_with(
            "Sᵀ/dPᵀ and dV/dK/dQ are drawn from issue to completion on the thin rows above each lane (Sᵀ/dPᵀ on top)"
        ));
        // The forward's note is as it was.
        let forward = chart(&timeline(32), "t".into(), vec![], Window::All);
        assert!(forward.notes[0].starts_with(
            "QKᵀ and P·V are drawn from issue to completion on the thin rows above each lane (QKᵀ on top), every other phase"
        ));
        let svg = protocol_viz::timeline::render(&c);
        assert!(svg.contains(
            "block 0 · SM 5 · MMA 1, tile 1: Sᵀ/dPᵀ 380 ns (issue → complete), 1.120 → 1.500 µs"
        ));
        assert_eq!(svg.matches("class=\"span bwd_grads\"").count(), 4);
        assert_eq!(svg.matches("class=\"span dq_reduce\"").count(), 2);
    }

    #[test]
    fn a_backward_summary_lists_each_roles_phases() {
        let lines = summary_lines(&summarize(&backward()));
        let header = summary_header();
        for line in &lines {
            assert_eq!(line.chars().count(), header.chars().count(), "{line}");
        }
        assert_eq!(
            lines[2],
            "dQ writer sync             2 x     900 ns   72.0%"
        );
        assert_eq!(
            lines[3],
            "dQ writer dQ reduce        2 x      40 ns    3.2%"
        );
        let roles: Vec<&str> = lines.iter().map(|l| l[..9].trim_end()).collect();
        assert_eq!(
            roles,
            [
                "producer",
                "producer",
                "dQ writer",
                "dQ writer",
                "MMA",
                "MMA",
                "MMA",
                "MMA",
                "MMA",
                "MMA",
                "MMA",
                "MMA"
            ]
        );
        let report = report(
            &Runs {
                info: crate::stages::find(23).unwrap().info(),
                gpu: "NVIDIA H200",
                problem: Problem::new(1, 2, 128, 128),
                seed: 3,
                check: None,
                timed: None,
                recorded: None,
                timeline: &backward(),
                blocks: 1,
            },
            Window::All,
        );
        assert!(
            report.lines[0].starts_with(
                "recorded block 0 on SM 5: 4 lanes (warps and warpgroups), 42 spans over 2.50 µs"
            ),
            "{}",
            report.lines[0]
        );
        assert!(
            report
                .svg
                .contains("Stage 23 (hopper-backward): a measured timeline")
        );
        assert_eq!(report.json["timeline"]["lanes"][1]["role"], "writer");
        assert_eq!(report.json["timeline"]["lanes"][2]["role"], "mma");
    }

    /// Every phase the kernels record is drawn in its own colour, and the chart's classes
    /// are the harness's phase names.
    #[test]
    fn every_phase_has_a_colour() {
        use protocol_viz::timeline::CLASS_COLOURS;
        for phase in Phase::ALL.into_iter().filter(|p| *p != Phase::Clock) {
            assert!(
                CLASS_COLOURS.iter().any(|(c, _)| *c == phase.name()),
                "{phase:?}"
            );
        }
        assert_eq!(CLASS_COLOURS.len(), Phase::ALL.len() - 1);
    }

    #[test]
    fn overhead_is_the_extra_time_in_percent() {
        assert!((overhead_percent(2.0, 2.05) - 2.5).abs() < 1e-9);
        assert!((overhead_percent(2.0, 1.9) + 5.0).abs() < 1e-9);
    }
}
