//! The K/V ring of the TMA stages (stage 10 on) and the mbarriers that say when a slot has
//! landed, as a small model and a figure drawn from it.
//!
//! Tile `t` of the loop goes into slot `t % NSTAGES`; that slot's barrier completes one
//! phase per tile it receives, so tile `t` completes the barrier's phase number
//! `t / NSTAGES`, and a thread waits for it by that phase's parity. [`slot_and_parity`] is
//! the kernel's arithmetic; [`Mbarrier`] is the barrier as the PTX ISA describes it,
//! reduced to what the ring uses, and the tests hold the one to the other over the
//! kernel's order of issues and waits. Book: "Stage 10: TMA and mbarriers".

use svg::node::element::{Group, Line, Title};

use layout_viz::render;

/// The slot tile `t` lands in and the parity of the barrier phase it completes:
/// `(t % nstages, (t / nstages) % 2)`, as `tma.cu` computes them for its wait.
pub fn slot_and_parity(t: u32, nstages: u32) -> (u32, u32) {
    (t % nstages, (t / nstages) % 2)
}

/// An mbarrier: a count of arrivals still pending in the current phase, a transaction
/// count of bytes still expected, and how many phases have completed. A phase completes
/// when both counts are zero; the pending count is then reset for the next phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mbarrier {
    arrivals: u32,
    pending: u32,
    tx: i64,
    completed: u32,
}

impl Mbarrier {
    /// `mbarrier.init` with `arrivals` expected arrivals per phase (the ring uses 1).
    pub fn new(arrivals: u32) -> Mbarrier {
        Mbarrier {
            arrivals,
            pending: arrivals,
            tx: 0,
            completed: 0,
        }
    }

    /// `mbarrier.arrive.expect_tx`: raise the bytes expected by `bytes`, then arrive.
    pub fn arrive_expect_tx(&mut self, bytes: u32) {
        self.tx += i64::from(bytes);
        assert!(self.pending > 0, "an arrival beyond the phase's count");
        self.pending -= 1;
        self.complete_if_done();
    }

    /// `mbarrier.arrive`: one arrival, no bytes (how stage 12's consumers release a slot).
    pub fn arrive(&mut self) {
        self.arrive_expect_tx(0);
    }

    /// What a copy's `complete_tx::bytes` does as its bytes land. The count may go
    /// below zero if a copy lands before the arrival that expects it (the PTX ISA allows
    /// that); the phase still completes only when both counts are back at zero.
    pub fn complete_tx(&mut self, bytes: u32) {
        self.tx -= i64::from(bytes);
        self.complete_if_done();
    }

    fn complete_if_done(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.completed += 1;
            self.pending = self.arrivals;
        }
    }

    /// `mbarrier.try_wait.parity`: true once the phase of that parity, the current one
    /// or the one before it, has completed, which is when the current phase's parity
    /// differs. One bit tells only neighbouring phases apart, so a waiter must never be
    /// two phases behind (and on a fresh barrier, parity 1 passes at once).
    pub fn try_wait_parity(&self, parity: u32) -> bool {
        self.completed % 2 != parity
    }

    pub fn pending_arrivals(&self) -> u32 {
        self.pending
    }

    pub fn tx_count(&self) -> i64 {
        self.tx
    }

    pub fn completed_phases(&self) -> u32 {
        self.completed
    }
}

// render.rs's ink, font and sizes; every text here is at least 12px, and the figure at
// most 740px wide, the book's column, so it is never scaled down.
/// Stage 10's tile shape, the one definition its kernel and its launcher use.
#[allow(dead_code)]
pub(crate) mod stage10 {
    include!("../../stages/10-tma/src/tiles.rs");
}

pub use layout_viz::svg_kit::MAX_WIDTH;
use layout_viz::svg_kit::{CHAR_W_12 as CHAR_W, INK, MARGIN, MUTED, document, fmt, rect, text};

fn cell(x: f64, y: f64, w: f64, h: f64, fill: &str, lines: &[String], tip: &str) -> Group {
    let mut g = Group::new().set("class", "cell").add(Title::new(tip)).add(
        rect(x, y, w, h, fill)
            .set("stroke", "#555555")
            .set("stroke-width", 0.6),
    );
    let n = lines.len() as f64;
    for (i, line) in lines.iter().enumerate() {
        let cy = y + h / 2.0 + (i as f64 - (n - 1.0) / 2.0) * 15.0 + 4.5;
        g = g.add(text(x + w / 2.0, cy, 12, line.as_str()).set("text-anchor", "middle"));
    }
    g
}

/// The ring over `n_tiles` tiles of `nstages` slots, and one phase of a slot's barrier
/// filled by the copies `boxes` names with their bytes (the K and V boxes of one tile).
pub fn ring_phases(nstages: u32, n_tiles: u32, boxes: &[(&str, u32)]) -> String {
    assert!(
        nstages >= 1 && n_tiles >= 1,
        "a ring needs a slot and a tile"
    );
    let label_w = 122.0;
    let col_w = ((MAX_WIDTH - 2.0 * MARGIN - label_w) / f64::from(n_tiles + 1)).floor();
    let row_h = 24.0;
    let lane_h = 40.0;
    let x0 = MARGIN + label_w;
    let col_x = |c: u32| x0 + f64::from(c) * col_w;
    let parity_fill = |p: u32| render::color(u64::from(p));

    let mut body = Group::new();
    let mut y = MARGIN + 14.0;
    body = body.add(
        text(
            MARGIN,
            y,
            16,
            format!("The K/V ring: {nstages} slots, one mbarrier each"),
        )
        .set("font-weight", "bold"),
    );
    y += 26.0;
    body = body.add(
        text(
            MARGIN,
            y,
            13,
            format!(
                "tile t: slot = t % {nstages}, parity = (t / {nstages}) % 2, over {n_tiles} tiles"
            ),
        )
        .set("font-weight", "bold"),
    );
    y += 22.0;

    // Column heads: the prologue, then one column per iteration t of the loop.
    for c in 0..=n_tiles {
        let head = if c == 0 {
            "prologue".to_string()
        } else {
            format!("t = {}", c - 1)
        };
        body = body.add(
            text(col_x(c) + col_w / 2.0, y, 12, head)
                .set("text-anchor", "middle")
                .set("fill", MUTED),
        );
    }
    y += 8.0;
    let row_label = |y: f64, h: f64, label: &str| {
        text(x0 - 8.0, y + h / 2.0 + 4.5, 12, label)
            .set("text-anchor", "end")
            .set("fill", MUTED)
    };

    // What the leader issues at the top of each column: Q and tiles 0..nstages-2 in the
    // prologue, tile t + nstages - 1 at iteration t.
    body = body.add(row_label(y, row_h, "leader issues"));
    for c in 0..=n_tiles {
        let tiles: Vec<u32> = if c == 0 {
            (0..nstages - 1).filter(|&u| u < n_tiles).collect()
        } else {
            let u = c - 1 + nstages - 1;
            if u < n_tiles { vec![u] } else { Vec::new() }
        };
        let mut names: Vec<String> = tiles.iter().map(|u| format!("tile {u}")).collect();
        if c == 0 {
            names.insert(0, "Q".into());
        }
        let what = if names.is_empty() {
            "nothing".to_string()
        } else {
            names.join(", ")
        };
        let tip = if c == 0 {
            format!("prologue: the leader loads Q and {what}")
        } else {
            format!("iteration {}: after the block barrier, {what}", c - 1)
        };
        body = body.add(cell(col_x(c), y, col_w, row_h, "#ffffff", &[what], &tip));
    }
    y += row_h + 8.0;

    // One lane per slot: tile u occupies its slot from the column where it is issued to
    // the iteration that reads it; lighter while its copies are in flight.
    for s in 0..nstages {
        body = body.add(row_label(y, lane_h, &format!("kv_full[{s}]")));
        body = body.add(
            Line::new()
                .set("x1", fmt(x0))
                .set("x2", fmt(col_x(n_tiles + 1)))
                .set("y1", fmt(y + lane_h / 2.0))
                .set("y2", fmt(y + lane_h / 2.0))
                .set("stroke", "#cccccc")
                .set("stroke-width", 1),
        );
        for u in (s..n_tiles).step_by(nstages as usize) {
            let (slot, parity) = slot_and_parity(u, nstages);
            debug_assert_eq!(slot, s);
            let phase = u / nstages;
            // Column of the issue: the prologue (0) for tiles 0..N-2, else iteration
            // u - (N - 1), which is column u - N + 2.
            let issued = if u + 1 < nstages { 0 } else { u + 2 - nstages };
            let read = u + 1;
            let fill = parity_fill(parity);
            let mut g = Group::new().set("class", "cell").add(Title::new(format!(
                "tile {u} in slot {slot}: issued {}, read at t = {u}; it completes phase {phase} of kv_full[{slot}], parity {parity}",
                if issued == 0 {
                    "in the prologue".to_string()
                } else {
                    format!("at t = {}", issued - 1)
                }
            )));
            if issued < read {
                g = g.add(
                    rect(col_x(issued), y, col_x(read) - col_x(issued), lane_h, fill)
                        .set("fill-opacity", 0.4),
                );
            }
            g = g.add(rect(col_x(read), y, col_w, lane_h, fill));
            g = g.add(
                rect(
                    col_x(issued),
                    y,
                    col_x(read + 1) - col_x(issued),
                    lane_h,
                    "none",
                )
                .set("stroke", "#555555")
                .set("stroke-width", 0.8),
            );
            let (cx, w) = (
                (col_x(issued) + col_x(read + 1)) / 2.0,
                col_x(read + 1) - col_x(issued),
            );
            let lines = if w >= 150.0 {
                vec![
                    format!("tile {u}"),
                    format!("phase {phase}, parity {parity}"),
                ]
            } else {
                vec![format!("tile {u}"), format!("parity {parity}")]
            };
            for (i, line) in lines.iter().enumerate() {
                g = g.add(
                    text(cx, y + 16.0 + 15.0 * i as f64, 12, line.as_str())
                        .set("text-anchor", "middle"),
                );
            }
            body = body.add(g);
        }
        y += lane_h + 6.0;
    }
    y += 2.0;

    // What each iteration waits for.
    for (label, which) in [("waits on slot", 0), ("for parity", 1)] {
        body = body.add(row_label(y, row_h, label));
        for t in 0..n_tiles {
            let (slot, parity) = slot_and_parity(t, nstages);
            let (value, fill) = if which == 0 {
                (slot, "#ffffff")
            } else {
                (parity, parity_fill(parity))
            };
            let tip = format!(
                "iteration {t}: mbarrier_wait(&kv_full[{slot}], {parity}), phase {} of that barrier",
                t / nstages
            );
            body = body.add(cell(
                col_x(t + 1),
                y,
                col_w,
                row_h,
                fill,
                &[value.to_string()],
                &tip,
            ));
        }
        y += row_h;
    }
    y += 14.0;

    // Legend.
    let mut x = MARGIN;
    for (fill, opacity, label) in [
        (parity_fill(0), 1.0, "parity 0 (even phase)"),
        (parity_fill(1), 1.0, "parity 1 (odd phase)"),
        (parity_fill(0), 0.4, "issued, copies in flight"),
    ] {
        body = body
            .add(
                rect(x, y, 14.0, 14.0, fill)
                    .set("fill-opacity", opacity)
                    .set("stroke", INK)
                    .set("stroke-width", 0.5),
            )
            .add(text(x + 20.0, y + 11.5, 12, label));
        x += 20.0 + label.chars().count() as f64 * CHAR_W + 22.0;
    }
    y += 40.0;

    // One phase of a slot's barrier, step by step, from the model.
    body = body.add(
        text(
            MARGIN,
            y,
            13,
            "one phase of a slot's barrier (d = 128, bf16): the model's counts after each step",
        )
        .set("font-weight", "bold"),
    );
    y += 12.0;
    let cols: [(&str, f64); 4] = [
        ("step", 340.0),
        ("arrivals pending", 125.0),
        ("tx-count (bytes)", 125.0),
        ("wait(parity 0)", 110.0),
    ];
    let mut x = MARGIN;
    for (head, w) in cols {
        body = body.add(
            text(x + w / 2.0, y + 14.0, 12, head)
                .set("text-anchor", "middle")
                .set("fill", MUTED),
        );
        x += w;
    }
    y += 22.0;
    let total: u32 = boxes.iter().map(|b| b.1).sum();
    let mut bar = Mbarrier::new(1);
    let mut steps = vec![("mbarrier_init(&kv_full[s], 1)".to_string(), bar)];
    bar.arrive_expect_tx(total);
    steps.push((format!("leader: arrive.expect_tx({total})"), bar));
    for (name, bytes) in boxes {
        bar.complete_tx(*bytes);
        steps.push((format!("{name}: complete_tx({bytes})"), bar));
    }
    for (i, (step, state)) in steps.iter().enumerate() {
        let done = state.completed_phases() > 0;
        let values = [
            step.clone(),
            state.pending_arrivals().to_string(),
            state.tx_count().to_string(),
            if state.try_wait_parity(0) {
                "passes".to_string()
            } else {
                "waits".to_string()
            },
        ];
        let mut x = MARGIN;
        for (k, ((_, w), v)) in cols.iter().zip(values).enumerate() {
            let fill = if k == 3 && done {
                parity_fill(0)
            } else {
                "#ffffff"
            };
            let tip = format!(
                "step {i}: {step}; pending arrivals {}, tx-count {}, phases completed {}",
                state.pending_arrivals(),
                state.tx_count(),
                state.completed_phases()
            );
            body = body.add(cell(x, y, *w, row_h, fill, &[v], &tip));
            x += w;
        }
        y += row_h;
    }
    y += 10.0;
    for line in [
        "A slot holds its tile from the issue (light) to the iteration that waits and reads.",
        "The copies may land in any order. When the last byte is in and the one arrival",
        "was made, phase 0 completes: pending is reset to 1 for phase 1, whose parity is 1.",
    ] {
        y += 16.0;
        body = body.add(text(MARGIN, y, 12, line));
    }
    let height = (y + MARGIN).ceil();
    let width = MAX_WIDTH;

    document(width, height, "The K/V ring's mbarrier phases", body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_and_parity_of_the_first_tiles() {
        let two: Vec<_> = (0..8).map(|t| slot_and_parity(t, 2)).collect();
        assert_eq!(
            two,
            [
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1)
            ]
        );
        let three: Vec<_> = (0..7).map(|t| slot_and_parity(t, 3)).collect();
        assert_eq!(
            three,
            [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 0)]
        );
    }

    /// The kernel's order over the model: barriers initialized with one arrival, the
    /// prologue issuing tiles 0..N-2, iteration t issuing tile t + N - 1 and then waiting
    /// for tile t by `slot_and_parity`. Each tile's copies land as late as they may (just
    /// before the wait), so every wait is checked both ways: it must not pass before its
    /// tile's bytes are in, and must pass after.
    #[test]
    fn the_kernels_waits_pass_exactly_when_their_tile_has_landed() {
        let (box_bytes, boxes) = (8192u32, 4u32);
        for nstages in 1..=4u32 {
            for n_tiles in 0..=13u32 {
                let mut bars = vec![Mbarrier::new(1); nstages as usize];
                let mut in_flight = vec![false; n_tiles as usize];
                let mut issue = |bars: &mut Vec<Mbarrier>, u: u32| {
                    if u < n_tiles {
                        bars[(u % nstages) as usize].arrive_expect_tx(boxes * box_bytes);
                        in_flight[u as usize] = true;
                    }
                };
                for u in 0..nstages - 1 {
                    issue(&mut bars, u);
                }
                for t in 0..n_tiles {
                    // (the block barrier: every thread is done with tile t - 1)
                    issue(&mut bars, t + nstages - 1);
                    let (slot, parity) = slot_and_parity(t, nstages);
                    let bar = &mut bars[slot as usize];
                    assert_eq!(bar.completed_phases(), t / nstages, "N {nstages}, t {t}");
                    assert!(
                        !bar.try_wait_parity(parity),
                        "N {nstages}, t {t}: passed before its copies landed"
                    );
                    for _ in 0..boxes {
                        bar.complete_tx(box_bytes);
                    }
                    assert!(bar.try_wait_parity(parity), "N {nstages}, t {t}");
                    assert_eq!(bar.tx_count(), 0);
                    assert_eq!(bar.pending_arrivals(), 1);
                }
            }
        }
    }

    #[test]
    fn a_copy_may_land_before_its_arrival() {
        let mut bar = Mbarrier::new(1);
        bar.complete_tx(100);
        assert_eq!((bar.tx_count(), bar.completed_phases()), (-100, 0));
        bar.arrive_expect_tx(300);
        assert_eq!(bar.completed_phases(), 0);
        bar.complete_tx(200);
        assert_eq!(bar.completed_phases(), 1);
        // A fresh barrier's "previous phase" has parity 1: that wait passes at once.
        assert!(Mbarrier::new(1).try_wait_parity(1));
    }

    #[test]
    fn the_figure_fits_the_column_with_text_of_12px_or_more() {
        let svg = ring_phases(2, 6, &[("K 0-63", 8192), ("K 64-127", 8192)]);
        assert!(svg.contains(r#"width="740""#));
        for (i, _) in svg.match_indices("font-size=\"") {
            let size: u32 = svg[i + 11..].split('"').next().unwrap().parse().unwrap();
            assert!(size >= 12, "font-size {size}");
        }
        assert!(svg.contains("phase 1, parity 1"));
    }
}
