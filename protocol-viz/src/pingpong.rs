//! Stage 16's schedule of the two consumer warpgroups, as a model: stage 13's named-barrier
//! turns that order their wgmma issues, checked over every interleaving, and, with stage
//! 16's overlap inside each warpgroup, the intended schedule in time, drawn from a small
//! simulation. The figure is what the kernel is written to do, not a measurement;
//! `flashlab timeline 16` draws what it does, measured.
//!
//! The turns (`ping_pong.cu` and `overlap.cu`, anchor `turns`): consumer `c` issues its wgmmas only after
//! `bar.sync MMA_TURN + c, 256`, which completes when 256 threads have arrived: its own
//! 128 and the other consumer's 128 from `bar.arrive MMA_TURN + c, 256`, made right after
//! that one issued its own wgmmas. Consumer 0's first turn is free: it arrives on its own
//! barrier once before the loop. Barrier `MMA_TURN` then counts one arrival more than
//! consumer 0 takes turns, and consumer 0 takes it once more after the loop, so that no
//! barrier ends the block with arrivals pending. [`turns`] checks that in every order.
//!
//! The schedule ([`schedule`]): each consumer runs the kernel's loop (tile 0: S alone and
//! its softmax; tile t: S_t and P V_{t-1} issued together, wait for S_t, softmax, wait for
//! P V_{t-1}, rescale O and pack P; the last P V after the loop), with durations given in
//! arbitrary units. The tensor cores take the issued wgmma groups one at a time, in the
//! order they were issued; a consumer's threads compute its softmax meanwhile. Loads are
//! taken to be in shared memory already. Book: "Stage 16: the overlap inside a warpgroup".

use std::collections::HashSet;

use svg::node::element::{Group, Polygon, Title};

pub use layout_viz::svg_kit::MAX_WIDTH;
use layout_viz::svg_kit::{
    CHAR_W_11, INK, MARGIN, MUTED, document, fmt, heading, line, rect, swatch, text,
};

/// The kernels' named barriers (`enum NamedBarrier` of `hopper/turns.cuh`, which
/// `ping_pong.cu` and `overlap.cu` include; 0 is `__syncthreads`), the threads a consumer
/// warpgroup arrives with and what each turn barrier counts (both consumers): read from the
/// host build of that header, so the model runs with the kernels' numbers.
pub use crate::kernel_fns::{consumers_wrote_o, mma_turn, turn_threads, warpgroup_threads};

/// The barriers the two consumers use, ids 1 to `MMA_TURN + 1` (and `CONSUMERS_WROTE_O`),
/// fresh; barrier `id` is element `id - 1`.
fn fresh_barriers() -> Vec<NamedBarrier> {
    let ids = consumers_wrote_o().max(mma_turn() + 1);
    vec![NamedBarrier::new(turn_threads()); ids as usize]
}

/// A hardware barrier (`bar.sync` / `bar.arrive` with a thread count): it counts the
/// threads that arrived, and when the count reaches `threads` the phase completes, every
/// `bar.sync` waiting on it goes on, and the count starts again from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NamedBarrier {
    pub threads: u32,
    pub arrived: u32,
    pub completed: u32,
}

impl NamedBarrier {
    pub fn new(threads: u32) -> NamedBarrier {
        NamedBarrier {
            threads,
            arrived: 0,
            completed: 0,
        }
    }

    /// `n` threads arrive; true when that completes the phase.
    pub fn arrive(&mut self, n: u32) -> bool {
        self.arrived += n;
        assert!(
            self.arrived <= self.threads,
            "more arrivals than the barrier counts"
        );
        if self.arrived == self.threads {
            self.arrived = 0;
            self.completed += 1;
            true
        } else {
            false
        }
    }
}

/// One step of a consumer's program, as far as the turns go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TurnStep {
    /// `bar.arrive id, 256` by the 128 threads of the warpgroup.
    Arrive(u32),
    /// `bar.sync id, 256`: arrive, then wait for the phase to complete.
    Sync(u32),
    /// The warpgroup issues the wgmmas of loop iteration `t` (S_t, and P V_{t-1} for t > 0).
    Issue(u32),
    /// The last tile's P V, issued after the loop, outside the turns.
    IssueLast,
}

/// Consumer `c`'s program over `n_tiles` tiles, as `overlap.cu` orders it; with
/// `final_sync` false, without consumer 0's last `bar.sync` on `MMA_TURN`.
pub fn turn_program(c: u32, n_tiles: u32, final_sync: bool) -> Vec<TurnStep> {
    let (mma_turn, consumers_wrote_o) = (mma_turn(), consumers_wrote_o());
    let mut p = Vec::new();
    if c == 0 {
        p.push(TurnStep::Arrive(mma_turn));
    }
    for t in 0..n_tiles {
        p.push(TurnStep::Sync(mma_turn + c));
        p.push(TurnStep::Issue(t));
        p.push(TurnStep::Arrive(mma_turn + (1 - c)));
    }
    if n_tiles > 0 {
        p.push(TurnStep::IssueLast);
    }
    if c == 0 && final_sync {
        p.push(TurnStep::Sync(mma_turn));
    }
    p.push(TurnStep::Sync(consumers_wrote_o));
    p
}

/// What [`turns`] found: the order in which the consumers issued, and the barriers at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnsReport {
    pub states: usize,
    /// Every order of issues seen (`(consumer, iteration)`), one per interleaving class.
    pub issue_orders: Vec<Vec<(u32, u32)>>,
    /// The barriers (barrier `id` at `id - 1`) at the end, in every ending.
    pub endings: Vec<Vec<NamedBarrier>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TurnState {
    pc: [usize; 2],
    /// The phase a consumer waits on in a `bar.sync`: (barrier, completed count to pass).
    waiting: [Option<(u32, u32)>; 2],
    bars: Vec<NamedBarrier>,
    issued: Vec<(u32, u32)>,
}

/// Runs the two consumers' turn programs in every interleaving; fails on a deadlock.
pub fn turns(n_tiles: u32, final_sync: bool) -> Result<TurnsReport, String> {
    turns_of([
        turn_program(0, n_tiles, final_sync),
        turn_program(1, n_tiles, final_sync),
    ])
}

/// [`turns`] for any two programs.
pub fn turns_of(programs: [Vec<TurnStep>; 2]) -> Result<TurnsReport, String> {
    let start = TurnState {
        pc: [0, 0],
        waiting: [None, None],
        bars: fresh_barriers(),
        issued: Vec::new(),
    };
    let bar = |id: u32| (id - 1) as usize;
    let warpgroup = warpgroup_threads();
    let mut seen = HashSet::new();
    let mut stack = vec![start];
    let mut report = TurnsReport {
        states: 0,
        issue_orders: Vec::new(),
        endings: Vec::new(),
    };
    while let Some(s) = stack.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        let mut moved = false;
        for (c, program) in programs.iter().enumerate() {
            let mut n = s.clone();
            if let Some((id, pass)) = n.waiting[c] {
                if n.bars[bar(id)].completed < pass {
                    continue;
                }
                n.waiting[c] = None;
                n.pc[c] += 1;
            } else if let Some(&step) = program.get(n.pc[c]) {
                match step {
                    TurnStep::Arrive(id) => {
                        n.bars[bar(id)].arrive(warpgroup);
                        n.pc[c] += 1;
                    }
                    TurnStep::Sync(id) => {
                        let pass = n.bars[bar(id)].completed + 1;
                        n.bars[bar(id)].arrive(warpgroup);
                        n.waiting[c] = Some((id, pass));
                    }
                    TurnStep::Issue(t) => {
                        n.issued.push((c as u32, t));
                        n.pc[c] += 1;
                    }
                    TurnStep::IssueLast => n.pc[c] += 1,
                }
            } else {
                continue;
            }
            moved = true;
            stack.push(n);
        }
        if !moved {
            let done = (0..2).all(|c| s.pc[c] == programs[c].len() && s.waiting[c].is_none());
            if !done {
                return Err(format!(
                    "deadlock: consumer 0 at {:?}, consumer 1 at {:?}, barriers {:?}",
                    programs[0].get(s.pc[0]),
                    programs[1].get(s.pc[1]),
                    s.bars
                ));
            }
            if !report.issue_orders.contains(&s.issued) {
                report.issue_orders.push(s.issued.clone());
            }
            if !report.endings.contains(&s.bars.clone()) {
                report.endings.push(s.bars.clone());
            }
        }
    }
    report.states = seen.len();
    Ok(report)
}

/// Durations of the schedule's pieces, in one arbitrary unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Durations {
    /// One wgmma group on the tensor cores: S = Q K^T or O += P V of one tile (the same
    /// FLOPs at BLOCK_KV = D).
    pub gemm: u32,
    /// The softmax of one tile: mask, row max, exponentials in place, row sums.
    pub softmax: u32,
    /// O's rescale and P's packing, after P V completes.
    pub pack: u32,
}

/// The figure's durations: illustrative, not measured.
pub const FIGURE_DURATIONS: Durations = Durations {
    gemm: 4,
    softmax: 6,
    pack: 1,
};

/// A wgmma group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gemm {
    /// S_t = Q K_t^T
    S(u32),
    /// O += P_t V_t
    Pv(u32),
}

/// What an interval of the schedule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Activity {
    /// On the tensor cores, for this consumer.
    Gemm(Gemm),
    /// The consumer's threads, waiting at `bar.sync` for their turn.
    TurnWait,
    /// The consumer's threads, waiting at `wgmma_wait` for a product.
    GemmWait,
    Softmax(u32),
    /// Rescale O (tiles > 0) and pack P of this tile.
    Pack(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub consumer: u32,
    pub start: u32,
    pub end: u32,
    pub what: Activity,
    /// For a Gemm: when it was issued.
    pub issued: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Arrive(u32),
    Sync(u32),
    Issue(Gemm),
    /// `wgmma_wait<N>`
    Wait(usize),
    Compute(Activity, u32),
}

fn schedule_program(c: u32, n_tiles: u32, d: Durations) -> Vec<Op> {
    let mma_turn = mma_turn();
    let mut p = Vec::new();
    if c == 0 {
        p.push(Op::Arrive(mma_turn));
    }
    for t in 0..n_tiles {
        p.push(Op::Sync(mma_turn + c));
        p.push(Op::Issue(Gemm::S(t)));
        if t > 0 {
            p.push(Op::Issue(Gemm::Pv(t - 1)));
        }
        p.push(Op::Arrive(mma_turn + (1 - c)));
        p.push(Op::Wait(if t > 0 { 1 } else { 0 }));
        p.push(Op::Compute(Activity::Softmax(t), d.softmax));
        if t > 0 {
            p.push(Op::Wait(0));
        }
        p.push(Op::Compute(Activity::Pack(t), d.pack));
    }
    if n_tiles > 0 {
        p.push(Op::Issue(Gemm::Pv(n_tiles - 1)));
        p.push(Op::Wait(0));
    }
    if c == 0 {
        p.push(Op::Sync(mma_turn));
    }
    p
}

/// The two consumers over `n_tiles` tiles: every interval of each, in the order they end.
pub fn schedule(n_tiles: u32, d: Durations) -> Result<Vec<Interval>, String> {
    let programs = [
        schedule_program(0, n_tiles, d),
        schedule_program(1, n_tiles, d),
    ];
    let mut pc = [0usize; 2];
    let mut clock = [0u32; 2];
    // A consumer in `bar.sync`: (barrier, completed count to pass, since when).
    let mut waiting: [Option<(u32, u32, u32)>; 2] = [None, None];
    let mut bars = fresh_barriers();
    let warpgroup = warpgroup_threads();
    let mut tc_free = 0u32;
    // Each consumer's wgmma groups not yet waited for: (end time).
    let mut pending: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    let mut out = Vec::new();
    loop {
        // The runnable consumer with the earliest clock goes next, so the tensor cores
        // receive the issues in time order.
        let runnable: Vec<usize> = (0..2)
            .filter(|&c| pc[c] < programs[c].len() && waiting[c].is_none())
            .collect();
        let Some(&c) = runnable.iter().min_by_key(|&&c| (clock[c], c)) else {
            if waiting.iter().any(Option::is_some) {
                return Err(format!("deadlock at {pc:?}, barriers {bars:?}"));
            }
            break;
        };
        let now = clock[c];
        match programs[c][pc[c]] {
            Op::Arrive(id) | Op::Sync(id) => {
                let is_sync = matches!(programs[c][pc[c]], Op::Sync(_));
                let b = &mut bars[(id - 1) as usize];
                let pass = b.completed + 1;
                let completed = b.arrive(warpgroup);
                if is_sync && !completed {
                    waiting[c] = Some((id, pass, now));
                }
                if completed {
                    for other in 0..2 {
                        if let Some((wid, wpass, since)) = waiting[other] {
                            if wid == id && wpass <= bars[(id - 1) as usize].completed {
                                waiting[other] = None;
                                clock[other] = clock[other].max(now);
                                pc[other] += 1;
                                if now > since {
                                    out.push(Interval {
                                        consumer: other as u32,
                                        start: since,
                                        end: now,
                                        what: Activity::TurnWait,
                                        issued: since,
                                    });
                                }
                            }
                        }
                    }
                }
                if waiting[c].is_none() {
                    pc[c] += 1;
                }
            }
            Op::Issue(g) => {
                let start = now.max(tc_free);
                let end = start + d.gemm;
                tc_free = end;
                pending[c].push(end);
                out.push(Interval {
                    consumer: c as u32,
                    start,
                    end,
                    what: Activity::Gemm(g),
                    issued: now,
                });
                pc[c] += 1;
            }
            Op::Wait(n) => {
                let keep = n.min(pending[c].len());
                let done: Vec<u32> = pending[c].drain(..pending[c].len() - keep).collect();
                let until = done.iter().copied().max().unwrap_or(now).max(now);
                if until > now {
                    out.push(Interval {
                        consumer: c as u32,
                        start: now,
                        end: until,
                        what: Activity::GemmWait,
                        issued: now,
                    });
                }
                clock[c] = until;
                pc[c] += 1;
            }
            Op::Compute(what, dur) => {
                if dur > 0 {
                    out.push(Interval {
                        consumer: c as u32,
                        start: now,
                        end: now + dur,
                        what,
                        issued: now,
                    });
                }
                clock[c] = now + dur;
                pc[c] += 1;
            }
        }
    }
    if bars.iter().any(|b| b.arrived != 0) {
        return Err(format!("a barrier ends with arrivals pending: {bars:?}"));
    }
    Ok(out)
}

const S_FILL: &str = "#aec7e8";
const PV_FILL: &str = "#98df8a";
const SOFTMAX_FILL: &str = "#ffbb78";
const PACK_FILL: &str = "#c5b0d5";
const TURN_FILL: &str = "#d0d0d0";
const WAIT_FILL: &str = "#f2f2f2";

fn describe(iv: &Interval) -> String {
    let who = format!("consumer {}", iv.consumer);
    match iv.what {
        Activity::Gemm(Gemm::S(t)) => format!(
            "{who}: S{t} = Q K{t}^T on the tensor cores from {} to {} (issued at {})",
            iv.start, iv.end, iv.issued
        ),
        Activity::Gemm(Gemm::Pv(t)) => format!(
            "{who}: O += P{t} V{t} on the tensor cores from {} to {} (issued at {})",
            iv.start, iv.end, iv.issued
        ),
        Activity::TurnWait => format!(
            "{who}: waits in bar.sync for its turn, {} to {}",
            iv.start, iv.end
        ),
        Activity::GemmWait => format!(
            "{who}: waits in wgmma_wait for its products, {} to {}",
            iv.start, iv.end
        ),
        Activity::Softmax(t) => format!(
            "{who}: softmax of S{t} (mask, max, exp2 in place, sums), {} to {}",
            iv.start, iv.end
        ),
        Activity::Pack(t) => format!(
            "{who}: {}pack P{t} into P V's A registers, {} to {}",
            if t > 0 { "rescale O, " } else { "" },
            iv.start,
            iv.end
        ),
    }
}

/// The intended schedule over `n_tiles` tiles with [`FIGURE_DURATIONS`]: for each
/// consumer a row of its wgmmas on the tensor cores and a row of its threads.
pub fn schedule_svg(n_tiles: u32) -> String {
    let d = FIGURE_DURATIONS;
    let ivs = schedule(n_tiles, d).expect("the kernel's schedule runs to the end");
    let t_end = ivs.iter().map(|iv| iv.end).max().unwrap_or(1);
    let width = MAX_WIDTH;
    let label_w = 96.0;
    let x0 = MARGIN + label_w;
    let scale = ((width - MARGIN - x0) / f64::from(t_end)).floor().max(1.0);
    let tx = |t: u32| x0 + f64::from(t) * scale;
    let row_h = 30.0;

    let (mut body, mut y) = heading(
        Group::new(),
        format!("Ping-pong, the intended schedule: two consumers, {n_tiles} tiles (a model)"),
        "turns: MMA_TURN + c; tile t > 0 issues S t, then P V t-1; time runs right",
    );
    y += 18.0;

    for c in 0..2u32 {
        y += 10.0;
        body =
            body.add(text(MARGIN, y + 4.0, 12, format!("consumer {c}")).set("font-weight", "bold"));
        y += 10.0;
        for (row, name) in [(0, "wgmma"), (1, "threads")] {
            body = body.add(
                text(x0 - 8.0, y + row_h / 2.0 + 4.5, 12, name)
                    .set("text-anchor", "end")
                    .set("fill", MUTED),
            );
            body = body.add(line(
                x0,
                y + row_h / 2.0,
                tx(t_end),
                y + row_h / 2.0,
                "#dddddd",
                1.0,
            ));
            for iv in ivs.iter().filter(|iv| iv.consumer == c) {
                let on_tc = matches!(iv.what, Activity::Gemm(_));
                if on_tc != (row == 0) {
                    continue;
                }
                let (fill, label) = match iv.what {
                    Activity::Gemm(Gemm::S(t)) => (S_FILL, format!("S{t}")),
                    Activity::Gemm(Gemm::Pv(t)) => (PV_FILL, format!("PV{t}")),
                    Activity::Softmax(t) => (SOFTMAX_FILL, format!("softmax {t}")),
                    Activity::Pack(_) => (PACK_FILL, String::new()),
                    Activity::TurnWait => (TURN_FILL, "turn".to_string()),
                    Activity::GemmWait => (WAIT_FILL, String::new()),
                };
                let (x, w) = (tx(iv.start), tx(iv.end) - tx(iv.start));
                let mut g = Group::new()
                    .set("class", "cell")
                    .add(Title::new(describe(iv)))
                    .add(
                        rect(x, y + 3.0, w, row_h - 6.0, fill)
                            .set("stroke", "#555555")
                            .set("stroke-width", 0.6),
                    );
                let fits = label.chars().count() as f64 * CHAR_W_11 + 4.0 <= w;
                let label = if fits {
                    label
                } else if let Activity::Softmax(t) = iv.what {
                    format!("sm{t}")
                } else {
                    String::new()
                };
                if !label.is_empty() {
                    g = g.add(
                        text(x + w / 2.0, y + row_h / 2.0 + 4.0, 11, label)
                            .set("text-anchor", "middle"),
                    );
                }
                if on_tc {
                    // The issue, a mark under the row.
                    let ix = tx(iv.issued);
                    g = g.add(
                        Polygon::new()
                            .set(
                                "points",
                                format!(
                                    "{},{} {},{} {},{}",
                                    fmt(ix),
                                    fmt(y + row_h - 3.0),
                                    fmt(ix - 4.0),
                                    fmt(y + row_h + 4.0),
                                    fmt(ix + 4.0),
                                    fmt(y + row_h + 4.0)
                                ),
                            )
                            .set("fill", INK),
                    );
                }
                body = body.add(g);
            }
            y += row_h + if row == 0 { 6.0 } else { 0.0 };
        }
    }
    // The time arrow.
    y += 14.0;
    body = body
        .add(line(x0, y, tx(t_end) - 8.0, y, INK, 1.0))
        .add(
            Polygon::new()
                .set(
                    "points",
                    format!(
                        "{},{} {},{} {},{}",
                        fmt(tx(t_end)),
                        fmt(y),
                        fmt(tx(t_end) - 8.0),
                        fmt(y - 4.0),
                        fmt(tx(t_end) - 8.0),
                        fmt(y + 4.0)
                    ),
                )
                .set("fill", INK),
        )
        .add(
            text(x0 - 8.0, y + 4.0, 12, "time")
                .set("text-anchor", "end")
                .set("fill", MUTED),
        );

    // Legend.
    y += 30.0;
    let mut x = MARGIN;
    for (fill, label) in [
        (S_FILL, "S = Q K^T"),
        (PV_FILL, "O += P V"),
        (SOFTMAX_FILL, "softmax"),
        (PACK_FILL, "rescale O, pack P"),
    ] {
        (body, x) = swatch(body, x, y, fill, label);
    }
    y += 22.0;
    let mut x = MARGIN;
    let turn_waits = ivs.iter().any(|iv| iv.what == Activity::TurnWait);
    for (fill, label) in [
        (TURN_FILL, "waits for its turn (bar.sync)"),
        (WAIT_FILL, "waits for a product (wgmma_wait)"),
    ]
    .into_iter()
    .filter(|&(fill, _)| fill != TURN_FILL || turn_waits)
    {
        (body, x) = swatch(body, x, y, fill, label);
    }
    for l in [
        "A triangle marks where a group was issued: it runs when the tensor cores get to it,"
            .to_string(),
        "in issue order. A model, not a measurement: loads are taken to be in place, and the"
            .to_string(),
        format!(
            "durations are illustrative (a product {}, a softmax {}, rescale and pack {}).",
            d.gemm, d.softmax, d.pack
        ),
    ] {
        y += 18.0;
        body = body.add(text(MARGIN, y, 12, l));
    }
    let height = (y + MARGIN).ceil();
    document(
        width,
        height,
        "Stage 16: the intended schedule of the turns and the overlap (a model)",
        body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turns_alternate_and_leave_no_barrier_half_arrived() {
        for n_tiles in 0..=6 {
            let r = turns(n_tiles, true).unwrap();
            // Whatever the interleaving, the issues alternate, consumer 0 first.
            let expected: Vec<(u32, u32)> = (0..n_tiles).flat_map(|t| [(0, t), (1, t)]).collect();
            assert_eq!(r.issue_orders, vec![expected], "{n_tiles} tiles");
            for ending in &r.endings {
                assert!(ending.iter().all(|b| b.arrived == 0), "{ending:?}");
                // MMA_TURN completes once per turn of consumer 0 and once more at the end.
                assert_eq!(ending[(mma_turn() - 1) as usize].completed, n_tiles + 1);
                assert_eq!(ending[mma_turn() as usize].completed, n_tiles);
            }
        }
    }

    #[test]
    fn without_consumer_0s_last_sync_its_barrier_keeps_one_warpgroups_arrival() {
        for n_tiles in 0..=4 {
            let r = turns(n_tiles, false).unwrap();
            for ending in &r.endings {
                assert_eq!(
                    ending[(mma_turn() - 1) as usize].arrived,
                    warpgroup_threads()
                );
            }
        }
    }

    #[test]
    fn without_the_free_first_turn_both_consumers_wait_forever() {
        let mut p0 = turn_program(0, 3, true);
        assert_eq!(p0.remove(0), TurnStep::Arrive(mma_turn()));
        let e = turns_of([p0, turn_program(1, 3, true)]).unwrap_err();
        assert!(e.starts_with("deadlock"), "{e}");
    }

    /// What the kernel's order guarantees whatever the durations.
    #[test]
    fn the_schedule_keeps_the_kernels_order_for_any_durations() {
        for n_tiles in 0..=5 {
            for gemm in 1..=5 {
                for softmax in 0..=12 {
                    for pack in 0..=2 {
                        let d = Durations {
                            gemm,
                            softmax,
                            pack,
                        };
                        let ivs = schedule(n_tiles, d).unwrap();
                        let mut tc: Vec<&Interval> = ivs
                            .iter()
                            .filter(|iv| matches!(iv.what, Activity::Gemm(_)))
                            .collect();
                        assert_eq!(tc.len() as u32, 2 * 2 * n_tiles);
                        tc.sort_by_key(|iv| iv.start);
                        for w in tc.windows(2) {
                            // One group at a time, in issue order.
                            assert!(w[0].end <= w[1].start, "{d:?}: {:?} {:?}", w[0], w[1]);
                            assert!(w[0].issued <= w[1].issued);
                        }
                        let find = |c: u32, a: Activity| {
                            ivs.iter()
                                .find(|iv| iv.consumer == c && iv.what == a)
                                .copied()
                        };
                        for c in 0..2 {
                            for t in 0..n_tiles {
                                let s = find(c, Activity::Gemm(Gemm::S(t))).unwrap();
                                let pv = find(c, Activity::Gemm(Gemm::Pv(t))).unwrap();
                                if let Some(sm) = find(c, Activity::Softmax(t)) {
                                    // The softmax reads S: after its wgmmas completed.
                                    assert!(sm.start >= s.end);
                                }
                                if t > 0 {
                                    // P_t is packed into the registers P V_{t-1} reads: after it completed.
                                    let prev = find(c, Activity::Gemm(Gemm::Pv(t - 1))).unwrap();
                                    if let Some(pk) = find(c, Activity::Pack(t)) {
                                        assert!(pk.start >= prev.end);
                                    }
                                    // S_t is issued before P V_{t-1}, in the same turn.
                                    assert!(s.issued <= prev.issued && s.start < prev.start);
                                }
                                // P V_t is issued after P_t is packed.
                                if let Some(pk) = find(c, Activity::Pack(t)) {
                                    assert!(pv.issued >= pk.end);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// What the figure shows, with its durations.
    #[test]
    fn in_the_figure_each_softmax_runs_under_the_other_consumers_products() {
        let n_tiles = 3;
        let ivs = schedule(n_tiles, FIGURE_DURATIONS).unwrap();
        let overlaps = |a: &Interval, b: &Interval| a.start < b.end && b.start < a.end;
        for sm in ivs
            .iter()
            .filter(|iv| matches!(iv.what, Activity::Softmax(t) if t > 0))
        {
            assert!(
                ivs.iter().any(|g| g.consumer != sm.consumer
                    && matches!(g.what, Activity::Gemm(_))
                    && overlaps(g, sm)),
                "{sm:?}"
            );
            // Also under the consumer's own P V of the tile before (inside a warpgroup).
            if let Activity::Softmax(t) = sm.what {
                let own = ivs
                    .iter()
                    .find(|g| {
                        g.consumer == sm.consumer && g.what == Activity::Gemm(Gemm::Pv(t - 1))
                    })
                    .unwrap();
                assert!(overlaps(own, sm), "{sm:?} {own:?}");
            }
            // And never under the other consumer's softmax: the exponentials take turns too.
            assert!(
                !ivs.iter().any(|o| o.consumer != sm.consumer
                    && matches!(o.what, Activity::Softmax(t) if t > 0)
                    && overlaps(o, sm)),
                "{sm:?}"
            );
        }
        // Once both consumers are in the loop, the tensor cores are never idle.
        let mut tc: Vec<&Interval> = ivs
            .iter()
            .filter(|iv| matches!(iv.what, Activity::Gemm(_)))
            .collect();
        tc.sort_by_key(|iv| iv.start);
        let first_pv = tc
            .iter()
            .position(|iv| iv.what == Activity::Gemm(Gemm::Pv(0)))
            .unwrap();
        for w in tc[first_pv - 1..].windows(2) {
            assert_eq!(w[0].end, w[1].start, "{:?} {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn the_figure_fits_the_column_with_text_of_11px_or_more() {
        let svg = schedule_svg(3);
        assert!(svg.contains(r#"width="740""#));
        for (i, _) in svg.match_indices("font-size=\"") {
            let size: u32 = svg[i + 11..].split('"').next().unwrap().parse().unwrap();
            assert!(size >= 11, "font-size {size}");
        }
        assert!(svg.contains("\nPV1\n") && svg.contains("\nsoftmax 2\n"));
    }
}
