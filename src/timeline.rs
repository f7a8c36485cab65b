//! `flashlab timeline N`'s pieces that need no GPU: a recorded [`Timeline`] as
//! layout-viz's chart data, the phase summary as text, and the overhead.

use harness::timeline::{Lane, Phase, PhaseStat, Timeline};
use layout_viz::timeline::{Chart, LegendEntry, Span, Window};

/// How a phase is drawn: its thin row above the lane for the products (QKᵀ on top, P·V
/// under it: in the ping-pong stage they overlap each other and the softmax), the lane's
/// own row for the rest.
pub fn sub_row(phase: Phase) -> u8 {
    match phase {
        Phase::Qk => 1,
        Phase::Pv => 2,
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
pub fn lane(l: &Lane) -> layout_viz::timeline::Lane {
    layout_viz::timeline::Lane {
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
        "QKᵀ and P·V are drawn from issue to completion on the thin rows above each lane (QKᵀ on top), every other phase on the lane's own row; hover over a bar for its numbers.".to_string(),
        "Each warpgroup's cycle counts are put on %globaltimer by two clock pairs, at its start and end, so blocks on different SMs share one time axis.".to_string(),
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

/// How much slower the timeline kernel ran than the timed one, in percent.
pub fn overhead_percent(timed_ms: f64, timeline_ms: f64) -> f64 {
    (timeline_ms / timed_ms - 1.0) * 100.0
}

/// The phase summary, a line per (role, phase): count, mean, share of the role's time.
pub fn summary_lines(stats: &[PhaseStat]) -> Vec<String> {
    stats
        .iter()
        .map(|s| {
            format!(
                "  {:<9} {:<11} {:>6} x {:>10}  {:>5.1}%",
                s.role.name(),
                s.phase.label(),
                s.count,
                layout_viz::timeline::duration(s.mean_ns),
                100.0 * s.share
            )
        })
        .collect()
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
        let mut consumer = vec![e(1, Phase::Clock, 0, 5_000, 1_100)];
        for t in 0..2u32 {
            let c = 1_200 + 1_000 * u64::from(t);
            consumer.push(e(1, Phase::WaitFull, t, c, c + 100));
            consumer.push(e(1, Phase::Qk, t, c + 100, c + 400));
            consumer.push(e(1, Phase::Softmax, t, c + 400, c + 600));
            consumer.push(e(1, Phase::Pv, t, c + 600, c + 1_000));
        }
        consumer.push(e(1, Phase::Epilogue, 2, 3_200, 3_500));
        consumer.push(e(1, Phase::Clock, 0, 7_500, 3_600));
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
        let svg = layout_viz::timeline::render(&c);
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
        assert_eq!(
            lines[0],
            "  producer  wait empty       1 x      10 ns    5.0%"
        );
        assert_eq!(
            lines[1],
            "  producer  load             2 x      40 ns   40.0%"
        );
        // The consumer's 2500 ns: QKᵀ 2 x 300 of them.
        assert!(
            lines.contains(&"  consumer  QKᵀ              2 x     300 ns   24.0%".to_string()),
            "{lines:#?}"
        );
    }

    #[test]
    fn overhead_is_the_extra_time_in_percent() {
        assert!((overhead_percent(2.0, 2.05) - 2.5).abs() < 1e-9);
        assert!((overhead_percent(2.0, 1.9) + 5.0).abs() < 1e-9);
    }
}
