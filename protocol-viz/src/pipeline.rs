//! Stage 12's ring with roles: a producer thread fills each slot, the consumer warps read
//! it, and two mbarriers per slot pass it back and forth, "full" (the tile has landed)
//! and "empty" (every consumer warp is done with it). A small model of that protocol,
//! checked over every interleaving, and the sequence diagram drawn from one run of it.
//!
//! The model follows `warp_specialized.cu` step by step. The producer, for each tile `t`
//! and each tensor (K, then V), waits on the slot's empty barrier unless it is the slot's
//! first use, then arrives on the full barrier with the tile's byte count and issues the
//! copies. Each consumer warp, for each tile and tensor, waits on the full barrier, reads
//! the slot (its wgmmas, complete before the next step) and arrives once on the empty
//! barrier. The copies land whenever the copy engine gets to them, in any order.
//! [`full_parity`] and [`empty_parity`] are the kernel's arithmetic, `use % 2` and
//! `(use - 1) % 2` with `use = t / NSTAGES`, and [`explore`] runs every order of the
//! actors' steps and every order of landings, and fails on a deadlock, on a wait that
//! passes on a phase other than its own, on a read of a slot whose tile has not landed,
//! and on a copy into a slot a consumer warp still needs. The barriers are
//! [`crate::ring::Mbarrier`], stage 10's model.
//! Book: "Stage 12: warp specialization", section "Full and empty".

use std::collections::HashSet;

use svg::node::element::{Group, Polygon, Title};

use crate::ring::Mbarrier;
use layout_viz::render;
pub use layout_viz::svg_kit::MAX_WIDTH;
use layout_viz::svg_kit::{
    CHAR_W_11, INK, MARGIN, MUTED, document, fmt, heading, line, rect, swatch, text,
};

/// Stage 12's tile shape, the one definition its kernel and its launcher use.
#[allow(dead_code)]
pub(crate) mod stage12 {
    include!("../../stages/12-warp-specialized/src/tiles.rs");
}

/// The bytes one tile's copies bring, `BLOCK_KV * D * sizeof(T)` as `hopper/producer.cuh`
/// expects them: K or V of stage 12's tile at d = 128, bf16.
pub const TILE_BYTES: u32 = stage12::BLOCK_KV * 128 * 2;

/// The parity a consumer waits for on a full barrier before reading a slot's `use`-th
/// tile (`use = t / NSTAGES`): the `use`-th phase completes when that tile lands.
/// `warp_specialized.cu`: `mbarrier_wait(&s.k_full[slot], use % 2)`.
pub fn full_parity(use_: u32) -> u32 {
    use_ % 2
}

/// The parity the producer waits for on an empty barrier before filling a slot for the
/// `use`-th time: the `(use - 1)`-th release, whose phase is `use - 1`; the first use of a
/// slot waits for nothing. `warp_specialized.cu`:
/// `if (use > 0) mbarrier_wait(&s.k_empty[slot], (use - 1) % 2)`.
pub fn empty_parity(use_: u32) -> Option<u32> {
    (use_ > 0).then(|| (use_ - 1) % 2)
}

/// FlashAttention-3's producer instead waits before every use, with the opposite parity
/// of the phase it fills, `(use + 1) % 2`: on a fresh barrier a wait for parity 1 passes
/// at once, so the first use needs no special case. The same protocol.
pub fn empty_parity_fresh_barrier(use_: u32) -> Option<u32> {
    Some((use_ + 1) % 2)
}

/// One configuration of the ring, with the parities the waiters use.
#[derive(Debug, Clone, Copy)]
pub struct Ring {
    pub nstages: u32,
    pub n_tiles: u32,
    /// 1: K alone; 2: K and V, each with its own slots and barriers, in the kernel's order.
    pub tensors: u32,
    /// The arrivals an empty barrier counts: one per consumer warp (8 in the kernel).
    pub consumer_warps: u32,
    pub full_parity: fn(u32) -> u32,
    pub empty_parity: fn(u32) -> Option<u32>,
}

impl Ring {
    /// The kernel's ring: its parities, `nstages` slots a tensor.
    pub fn kernel(nstages: u32, n_tiles: u32, tensors: u32, consumer_warps: u32) -> Ring {
        assert!(nstages >= 1 && tensors >= 1 && consumer_warps >= 1);
        Ring {
            nstages,
            n_tiles,
            tensors,
            consumer_warps,
            full_parity,
            empty_parity,
        }
    }

    /// The index of the barrier pair (and slot) of `tensor`'s tile `tile`.
    fn slot_index(&self, tensor: u32, tile: u32) -> usize {
        (tensor * self.nstages + tile % self.nstages) as usize
    }

    /// How many tiles slot `slot` of a tensor receives.
    fn uses(&self, slot: u32) -> u32 {
        if slot >= self.n_tiles {
            0
        } else {
            (self.n_tiles - slot).div_ceil(self.nstages)
        }
    }
}

/// One step of an actor's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Producer: `mbarrier_wait` on the empty barrier of `tile`'s slot.
    WaitEmpty { tensor: u32, tile: u32, parity: u32 },
    /// Producer: `arrive.expect_tx` on the full barrier, then the tile's copies.
    Issue { tensor: u32, tile: u32 },
    /// Consumer warp: `mbarrier_wait` on the full barrier of `tile`'s slot.
    WaitFull { tensor: u32, tile: u32, parity: u32 },
    /// Consumer warp: its wgmmas read the slot, and complete.
    Read { tensor: u32, tile: u32 },
    /// Consumer warp: lane 0 arrives on the empty barrier.
    Release { tensor: u32, tile: u32 },
}

/// A move of the whole system: an actor's next step, or a copy landing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    Producer(Step),
    Consumer(u32, Step),
    Land { tensor: u32, tile: u32 },
}

/// Where every actor is and what every barrier and slot holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct State {
    producer: usize,
    consumers: Vec<usize>,
    /// Tiles issued whose bytes have not all landed, in issue order.
    in_flight: Vec<(u32, u32)>,
    full: Vec<Mbarrier>,
    empty: Vec<Mbarrier>,
    /// The tile a slot holds, once its bytes have landed.
    landed: Vec<Option<u32>>,
}

impl State {
    pub fn full(&self, i: usize) -> &Mbarrier {
        &self.full[i]
    }
    pub fn empty(&self, i: usize) -> &Mbarrier {
        &self.empty[i]
    }
}

/// The ring and the two programs, the producer's and every consumer warp's.
#[derive(Debug, Clone)]
pub struct Model {
    pub ring: Ring,
    producer: Vec<Step>,
    consumer: Vec<Step>,
}

impl Model {
    pub fn new(ring: Ring) -> Model {
        let mut producer = Vec::new();
        let mut consumer = Vec::new();
        for tile in 0..ring.n_tiles {
            let use_ = tile / ring.nstages;
            for tensor in 0..ring.tensors {
                if let Some(parity) = (ring.empty_parity)(use_) {
                    producer.push(Step::WaitEmpty {
                        tensor,
                        tile,
                        parity,
                    });
                }
                producer.push(Step::Issue { tensor, tile });
                consumer.push(Step::WaitFull {
                    tensor,
                    tile,
                    parity: (ring.full_parity)(use_),
                });
                consumer.push(Step::Read { tensor, tile });
                consumer.push(Step::Release { tensor, tile });
            }
        }
        Model {
            ring,
            producer,
            consumer,
        }
    }

    /// Barriers as the kernel initializes them: full with one arrival (the producer's),
    /// empty with one per consumer warp.
    pub fn start(&self) -> State {
        let n = (self.ring.tensors * self.ring.nstages) as usize;
        State {
            producer: 0,
            consumers: vec![0; self.ring.consumer_warps as usize],
            in_flight: Vec::new(),
            full: vec![Mbarrier::new(1); n],
            empty: vec![Mbarrier::new(self.ring.consumer_warps); n],
            landed: vec![None; n],
        }
    }

    pub fn producer_next(&self, s: &State) -> Option<Step> {
        self.producer.get(s.producer).copied()
    }

    pub fn consumer_next(&self, s: &State, warp: u32) -> Option<Step> {
        self.consumer.get(s.consumers[warp as usize]).copied()
    }

    /// Whether a step can run now: a wait only once its barrier's phase of that parity
    /// has completed (`try_wait.parity`), everything else at once.
    pub fn ready(&self, s: &State, step: Step) -> bool {
        match step {
            Step::WaitEmpty {
                tensor,
                tile,
                parity,
            } => s.empty[self.ring.slot_index(tensor, tile)].try_wait_parity(parity),
            Step::WaitFull {
                tensor,
                tile,
                parity,
            } => s.full[self.ring.slot_index(tensor, tile)].try_wait_parity(parity),
            _ => true,
        }
    }

    /// Every move possible from `s`.
    pub fn moves(&self, s: &State) -> Vec<Move> {
        let mut out = Vec::new();
        if let Some(step) = self.producer_next(s).filter(|&st| self.ready(s, st)) {
            out.push(Move::Producer(step));
        }
        for w in 0..self.ring.consumer_warps {
            if let Some(step) = self.consumer_next(s, w).filter(|&st| self.ready(s, st)) {
                out.push(Move::Consumer(w, step));
            }
        }
        for &(tensor, tile) in &s.in_flight {
            out.push(Move::Land { tensor, tile });
        }
        out
    }

    /// Where `Release { tensor, tile }` is in the consumers' program.
    fn release_position(&self, tensor: u32, tile: u32) -> usize {
        self.consumer
            .iter()
            .position(|&st| st == Step::Release { tensor, tile })
            .expect("every tile is released")
    }

    /// Makes a move (one of [`Model::moves`]), checking the protocol.
    pub fn apply(&self, s: &mut State, m: Move) -> Result<(), String> {
        let ring = &self.ring;
        match m {
            Move::Producer(step) => {
                match step {
                    Step::WaitEmpty { tensor, tile, .. } => {
                        // The wait is for the release of the slot's previous tile: phase
                        // use - 1, so `use` phases have completed, no more.
                        let use_ = tile / ring.nstages;
                        let done = s.empty[ring.slot_index(tensor, tile)].completed_phases();
                        if done != use_ {
                            return Err(format!(
                                "the producer's wait before tile {tile} (tensor {tensor}) passed with {done} releases of its slot completed, not {use_}"
                            ));
                        }
                    }
                    Step::Issue { tensor, tile } => {
                        if tile >= ring.nstages {
                            let pos = self.release_position(tensor, tile - ring.nstages);
                            if let Some(w) = s.consumers.iter().position(|&pc| pc <= pos) {
                                return Err(format!(
                                    "tile {tile} (tensor {tensor}) is copied into the slot while consumer warp {w} still needs tile {}",
                                    tile - ring.nstages
                                ));
                            }
                        }
                        let i = ring.slot_index(tensor, tile);
                        if s.full[i].pending_arrivals() == 0 {
                            return Err(format!("tile {tile}: an arrival beyond the phase's one"));
                        }
                        s.full[i].arrive_expect_tx(TILE_BYTES);
                        s.landed[i] = None;
                        s.in_flight.push((tensor, tile));
                    }
                    _ => unreachable!("not a producer step: {step:?}"),
                }
                s.producer += 1;
            }
            Move::Land { tensor, tile } => {
                let k = s
                    .in_flight
                    .iter()
                    .position(|&x| x == (tensor, tile))
                    .ok_or_else(|| format!("tile {tile} lands but was not issued"))?;
                s.in_flight.remove(k);
                let i = ring.slot_index(tensor, tile);
                s.full[i].complete_tx(TILE_BYTES);
                s.landed[i] = Some(tile);
            }
            Move::Consumer(w, step) => {
                let i = match step {
                    Step::WaitFull { tensor, tile, .. }
                    | Step::Read { tensor, tile }
                    | Step::Release { tensor, tile } => ring.slot_index(tensor, tile),
                    _ => unreachable!("not a consumer step: {step:?}"),
                };
                match step {
                    Step::WaitFull { tensor, tile, .. } => {
                        // Phase `use` completes when the tile lands: exactly use + 1 done.
                        let use_ = tile / ring.nstages;
                        let done = s.full[i].completed_phases();
                        if done != use_ + 1 {
                            return Err(format!(
                                "warp {w}'s wait for tile {tile} (tensor {tensor}) passed with {done} phases of its full barrier completed, not {}",
                                use_ + 1
                            ));
                        }
                    }
                    Step::Read { tensor, tile } => {
                        if s.landed[i] != Some(tile) {
                            return Err(format!(
                                "warp {w} reads tile {tile} (tensor {tensor}) but its slot holds {:?}",
                                s.landed[i]
                            ));
                        }
                    }
                    Step::Release { tile, .. } => {
                        if s.empty[i].pending_arrivals() == 0 {
                            return Err(format!(
                                "warp {w}'s release of tile {tile}: an arrival beyond the phase's count"
                            ));
                        }
                        s.empty[i].arrive();
                    }
                    _ => unreachable!(),
                }
                s.consumers[w as usize] += 1;
            }
        }
        Ok(())
    }

    pub fn is_done(&self, s: &State) -> bool {
        s.producer == self.producer.len()
            && s.consumers.iter().all(|&pc| pc == self.consumer.len())
            && s.in_flight.is_empty()
    }

    /// At the end every barrier has completed one phase per use of its slot and has no
    /// phase half done.
    pub fn check_end(&self, s: &State) -> Result<(), String> {
        for tensor in 0..self.ring.tensors {
            for slot in 0..self.ring.nstages {
                let i = self.ring.slot_index(tensor, slot);
                let uses = self.ring.uses(slot);
                for (name, bar) in [("full", &s.full[i]), ("empty", &s.empty[i])] {
                    if bar.completed_phases() != uses
                        || bar.pending_arrivals()
                            != if name == "full" {
                                1
                            } else {
                                self.ring.consumer_warps
                            }
                        || bar.tx_count() != 0
                    {
                        return Err(format!(
                            "tensor {tensor}, slot {slot}: the {name} barrier ends at {bar:?}, {uses} uses"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Runs every interleaving of the producer's steps, every consumer warp's steps and the
/// landings, from the kernel's start; returns how many states it saw, or the first
/// violation or deadlock, with the state it happened in.
pub fn explore(ring: Ring) -> Result<usize, String> {
    let model = Model::new(ring);
    let mut seen = HashSet::new();
    let mut stack = vec![model.start()];
    while let Some(state) = stack.pop() {
        if seen.contains(&state) {
            continue;
        }
        let moves = model.moves(&state);
        if moves.is_empty() {
            if model.is_done(&state) {
                model
                    .check_end(&state)
                    .map_err(|e| format!("{e} (in {state:?})"))?;
            } else {
                return Err(format!(
                    "deadlock: producer at {:?}, consumers at {:?} (in {state:?})",
                    model.producer_next(&state),
                    (0..ring.consumer_warps)
                        .map(|w| model.consumer_next(&state, w))
                        .collect::<Vec<_>>()
                ));
            }
        }
        for m in moves {
            let mut next = state.clone();
            model
                .apply(&mut next, m)
                .map_err(|e| format!("{e} (move {m:?} in {state:?})"))?;
            stack.push(next);
        }
        seen.insert(state);
    }
    Ok(seen.len())
}

/// Who a row of the sequence diagram is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    Producer,
    Copies,
    Consumers,
}

/// One row of the sequence diagram: one step of one actor (the consumer warps take each
/// step together), or the moment a wait begins to block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub who: Who,
    pub tile: u32,
    pub kind: RowKind,
    /// The completed phases of each full and each empty barrier after the row.
    pub full_done: Vec<u32>,
    pub empty_done: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// A wait that cannot pass yet: the waiter blocks from here.
    Blocks {
        parity: u32,
    },
    /// A wait that passes; `blocked` when a `Blocks` row came before it.
    Passes {
        parity: u32,
        blocked: bool,
    },
    Issue,
    Land,
    /// The consumers' wgmmas read the slot (not drawn as a row).
    Read,
    Release,
}

/// One run of the model for the diagram, K's ring alone: the producer moves whenever it
/// can, then the consumer warps (all of them, one step each), and a copy lands only when
/// neither can move, the oldest first. So the producer runs ahead until the ring is full,
/// and every wait in the run blocks before it passes.
pub fn sequence(nstages: u32, n_tiles: u32, consumer_warps: u32) -> Result<Vec<Row>, String> {
    let model = Model::new(Ring::kernel(nstages, n_tiles, 1, consumer_warps));
    let mut s = model.start();
    let mut rows = Vec::new();
    let (mut producer_blocked, mut consumers_blocked) = (false, false);
    let snapshot = |s: &State| -> (Vec<u32>, Vec<u32>) {
        (
            s.full.iter().map(Mbarrier::completed_phases).collect(),
            s.empty.iter().map(Mbarrier::completed_phases).collect(),
        )
    };
    let tile_of = |step: Step| match step {
        Step::WaitEmpty { tile, .. }
        | Step::Issue { tile, .. }
        | Step::WaitFull { tile, .. }
        | Step::Read { tile, .. }
        | Step::Release { tile, .. } => tile,
    };
    let push = |rows: &mut Vec<Row>, s: &State, who, tile, kind| {
        let (full_done, empty_done) = snapshot(s);
        rows.push(Row {
            who,
            tile,
            kind,
            full_done,
            empty_done,
        });
    };
    let mut guard = 0;
    while !model.is_done(&s) {
        guard += 1;
        if guard > 10_000 {
            return Err("the run does not end".into());
        }
        // Waits that block from now on.
        if let Some(step @ Step::WaitEmpty { parity, .. }) = model.producer_next(&s) {
            if !producer_blocked && !model.ready(&s, step) {
                producer_blocked = true;
                push(
                    &mut rows,
                    &s,
                    Who::Producer,
                    tile_of(step),
                    RowKind::Blocks { parity },
                );
            }
        }
        if let Some(step @ Step::WaitFull { parity, .. }) = model.consumer_next(&s, 0) {
            if !consumers_blocked && !model.ready(&s, step) {
                consumers_blocked = true;
                push(
                    &mut rows,
                    &s,
                    Who::Consumers,
                    tile_of(step),
                    RowKind::Blocks { parity },
                );
            }
        }
        if let Some(step) = model.producer_next(&s).filter(|&st| model.ready(&s, st)) {
            model.apply(&mut s, Move::Producer(step))?;
            let kind = match step {
                Step::WaitEmpty { parity, .. } => RowKind::Passes {
                    parity,
                    blocked: std::mem::take(&mut producer_blocked),
                },
                _ => RowKind::Issue,
            };
            push(&mut rows, &s, Who::Producer, tile_of(step), kind);
            continue;
        }
        if let Some(step) = model.consumer_next(&s, 0).filter(|&st| model.ready(&s, st)) {
            for w in 0..consumer_warps {
                if model.consumer_next(&s, w) != Some(step) || !model.ready(&s, step) {
                    return Err(format!("warp {w} is not in step with warp 0 at {step:?}"));
                }
                model.apply(&mut s, Move::Consumer(w, step))?;
            }
            let kind = match step {
                Step::WaitFull { parity, .. } => RowKind::Passes {
                    parity,
                    blocked: std::mem::take(&mut consumers_blocked),
                },
                Step::Read { .. } => RowKind::Read,
                _ => RowKind::Release,
            };
            push(&mut rows, &s, Who::Consumers, tile_of(step), kind);
            continue;
        }
        if let Some(&(tensor, tile)) = s.in_flight.first() {
            model.apply(&mut s, Move::Land { tensor, tile })?;
            push(&mut rows, &s, Who::Copies, tile, RowKind::Land);
            continue;
        }
        return Err("deadlock".into());
    }
    model.check_end(&s)?;
    Ok(rows)
}

const ARROW_FONT: u32 = 11;

fn arrow(x1: f64, x2: f64, y: f64, dashed: bool, label: &str, tip: &str, width: f64) -> Group {
    let dir = if x2 > x1 { 1.0 } else { -1.0 };
    let head = 7.0;
    let mut shaft = line(x1, y, x2 - dir * head, y, INK, 1.2);
    if dashed {
        shaft = shaft.set("stroke-dasharray", "5 3");
    }
    let tip_poly = Polygon::new()
        .set(
            "points",
            format!(
                "{},{} {},{} {},{}",
                fmt(x2),
                fmt(y),
                fmt(x2 - dir * head),
                fmt(y - 4.0),
                fmt(x2 - dir * head),
                fmt(y + 4.0)
            ),
        )
        .set("fill", INK);
    let w = label.chars().count() as f64 * CHAR_W_11 + 6.0;
    let cx = ((x1 + x2) / 2.0).clamp(MARGIN + w / 2.0, width - MARGIN - w / 2.0);
    Group::new()
        .set("class", "cell")
        .add(Title::new(tip))
        .add(shaft)
        .add(tip_poly)
        .add(rect(cx - w / 2.0, y - 16.0, w, 13.0, "#ffffff").set("fill-opacity", 0.85))
        .add(text(cx, y - 5.0, ARROW_FONT, label).set("text-anchor", "middle"))
}

/// The sequence diagram of K's ring over `n_tiles` tiles of `nstages` slots: the producer
/// thread, the copy engine, each slot's full and empty barrier, and the consumer warps,
/// time running down, drawn from [`sequence`].
pub fn full_empty_svg(nstages: u32, n_tiles: u32, consumer_warps: u32) -> String {
    let rows: Vec<Row> = sequence(nstages, n_tiles, consumer_warps)
        .expect("the kernel's protocol runs to the end")
        .into_iter()
        .filter(|r| r.kind != RowKind::Read)
        .collect();
    let width = MAX_WIDTH;
    let parity_fill = |p: u32| render::color(u64::from(p));
    // Lifelines: producer, copy engine, full[0..N], empty[0..N], consumers.
    let n_lines = 3 + 2 * nstages as usize;
    let side = 52.0;
    let step = (width - 2.0 * MARGIN - 2.0 * side) / (n_lines - 1) as f64;
    let lx = |i: usize| MARGIN + side + i as f64 * step;
    let producer_x = lx(0);
    let copies_x = lx(1);
    let full_x = |s: u32| lx(2 + s as usize);
    let empty_x = |s: u32| lx(2 + nstages as usize + s as usize);
    let consumers_x = lx(n_lines - 1);
    let row_h = 26.0;

    let (mut body, mut y) = heading(
        Group::new(),
        format!("Full and empty: K's ring, {nstages} slots, {n_tiles} tiles"),
        format!(
            "tile t: slot t % {nstages}, use = t / {nstages}; full waits parity use % 2, empty (use - 1) % 2"
        ),
    );
    y += 26.0;
    let heads: Vec<(f64, String, String)> =
        std::iter::once((producer_x, "producer".to_string(), "thread 0".to_string()))
            .chain(std::iter::once((
                copies_x,
                "copy".to_string(),
                "engine".to_string(),
            )))
            .chain((0..nstages).map(|s| (full_x(s), "k_full".to_string(), format!("[{s}]"))))
            .chain((0..nstages).map(|s| (empty_x(s), "k_empty".to_string(), format!("[{s}]"))))
            .chain(std::iter::once((
                consumers_x,
                "consumers".to_string(),
                format!("{consumer_warps} warps"),
            )))
            .collect();
    for (x, a, b) in &heads {
        body = body
            .add(
                text(*x, y, 12, a.as_str())
                    .set("text-anchor", "middle")
                    .set("font-weight", "bold"),
            )
            .add(
                text(*x, y + 15.0, 12, b.as_str())
                    .set("text-anchor", "middle")
                    .set("fill", MUTED),
            );
    }
    y += 28.0;
    let top = y;
    let row_y = |i: usize| top + row_h * (i as f64 + 0.7);
    let bottom = top + row_h * rows.len() as f64 + 8.0;

    // Plain lifelines for the actors.
    for x in [producer_x, copies_x, consumers_x] {
        body = body.add(line(x, top, x, bottom, "#bbbbbb", 1.0).set("stroke-dasharray", "3 3"));
    }
    // Barrier lifelines: coloured by the parity of the phase in progress, row by row.
    let segment = |x: f64, y0: f64, y1: f64, done: u32, name: &str| {
        let parity = done % 2;
        Group::new()
            .set("class", "cell")
            .add(Title::new(format!(
                "{name}: {done} phases completed; phase {done} (parity {parity}) in progress"
            )))
            .add(
                rect(x - 5.0, y0, 10.0, y1 - y0, parity_fill(parity))
                    .set("stroke", "#888888")
                    .set("stroke-width", 0.5),
            )
    };
    for s in 0..nstages {
        for (x, name, done_of) in [
            (
                full_x(s),
                format!("k_full[{s}]"),
                (|r: &Row, s: usize| r.full_done[s]) as fn(&Row, usize) -> u32,
            ),
            (empty_x(s), format!("k_empty[{s}]"), |r: &Row, s: usize| {
                r.empty_done[s]
            }),
        ] {
            let (mut from, mut done) = (top, 0u32);
            for (i, r) in rows.iter().enumerate() {
                let now = done_of(r, s as usize);
                if now != done {
                    body = body.add(segment(x, from, row_y(i), done, &name));
                    (from, done) = (row_y(i), now);
                }
            }
            body = body.add(segment(x, from, bottom, done, &name));
        }
    }

    // Activation bars: who waits (grey), the copies in flight, the consumers reading.
    let bar = |x: f64, dx: f64, y0: f64, y1: f64, fill: &str, tip: String| {
        Group::new().set("class", "cell").add(Title::new(tip)).add(
            rect(x - 4.0 + dx, y0, 8.0, (y1 - y0).max(2.0), fill)
                .set("stroke", "#555555")
                .set("stroke-width", 0.5),
        )
    };
    const WAITING: &str = "#d0d0d0";
    const READING: &str = "#98df8a";
    const IN_FLIGHT: &str = "#c5b0d5";
    let mut blocked_since: [Option<usize>; 2] = [None, None];
    let mut reading_since: Option<(usize, u32)> = None;
    let mut in_flight: Vec<(usize, u32)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let slot = r.tile % nstages;
        let idx = if r.who == Who::Producer { 0 } else { 1 };
        match r.kind {
            RowKind::Blocks { .. } => blocked_since[idx] = Some(i),
            RowKind::Passes { .. } => {
                if let Some(b) = blocked_since[idx].take() {
                    let x = if idx == 0 { producer_x } else { consumers_x };
                    body = body.add(bar(
                        x,
                        0.0,
                        row_y(b),
                        row_y(i),
                        WAITING,
                        format!("blocked in mbarrier_wait (tile {})", r.tile),
                    ));
                }
                if r.who == Who::Consumers {
                    reading_since = Some((i, r.tile));
                }
            }
            RowKind::Issue => in_flight.push((i, r.tile)),
            RowKind::Land => {
                if let Some(k) = in_flight.iter().position(|&(_, t)| t == r.tile) {
                    let (from, t) = in_flight.remove(k);
                    let dx = (f64::from(t % nstages) - (f64::from(nstages) - 1.0) / 2.0) * 9.0;
                    body = body.add(bar(
                        copies_x,
                        dx,
                        row_y(from),
                        row_y(i),
                        IN_FLIGHT,
                        format!("tile {t}'s copies in flight to slot {}", t % nstages),
                    ));
                }
            }
            RowKind::Release => {
                if let Some((from, t)) = reading_since.take() {
                    body = body.add(bar(
                        consumers_x,
                        0.0,
                        row_y(from),
                        row_y(i),
                        READING,
                        format!("tile {t}: the consumers' wgmmas read slot {}", t % nstages),
                    ));
                }
            }
            RowKind::Read => {}
        }
        let _ = slot;
    }

    // The arrows.
    for (i, r) in rows.iter().enumerate() {
        let y = row_y(i);
        let slot = r.tile % nstages;
        let use_ = r.tile / nstages;
        let g = match (r.who, r.kind) {
            (Who::Producer, RowKind::Blocks { parity }) => arrow(
                producer_x,
                empty_x(slot),
                y,
                true,
                &format!("wait parity {parity}"),
                &format!(
                    "producer, before tile {}: mbarrier_wait(&k_empty[{slot}], {parity}) blocks: the release of tile {} (phase {}) has not completed",
                    r.tile,
                    r.tile - nstages,
                    use_ - 1
                ),
                width,
            ),
            (Who::Producer, RowKind::Passes { parity, blocked }) => arrow(
                empty_x(slot),
                producer_x,
                y,
                false,
                &if blocked {
                    "passes".to_string()
                } else {
                    format!("wait parity {parity}: passes")
                },
                &format!(
                    "phase {} of k_empty[{slot}] has completed: the producer may refill slot {slot} with tile {}",
                    use_ - 1,
                    r.tile
                ),
                width,
            ),
            (Who::Producer, RowKind::Issue) => arrow(
                producer_x,
                full_x(slot),
                y,
                false,
                &format!("expect_tx, copies: tile {}", r.tile),
                &format!(
                    "producer: mbarrier_arrive_expect_tx(&k_full[{slot}], 32768), then the TMA copies of tile {} into slot {slot}; phase {use_} of k_full[{slot}] now waits for the bytes",
                    r.tile
                ),
                width,
            ),
            (Who::Copies, RowKind::Land) => arrow(
                copies_x,
                full_x(slot),
                y,
                false,
                &format!("tile {} in: phase {use_} done", r.tile),
                &format!(
                    "the last byte of tile {} lands: k_full[{slot}] completes phase {use_} (parity {})",
                    r.tile,
                    use_ % 2
                ),
                width,
            ),
            (Who::Consumers, RowKind::Blocks { parity }) => arrow(
                consumers_x,
                full_x(slot),
                y,
                true,
                &format!("wait parity {parity}"),
                &format!(
                    "consumer warps: mbarrier_wait(&k_full[{slot}], {parity}) for tile {} blocks until phase {use_} completes",
                    r.tile
                ),
                width,
            ),
            (Who::Consumers, RowKind::Passes { parity, blocked }) => arrow(
                full_x(slot),
                consumers_x,
                y,
                false,
                &if blocked {
                    "passes".to_string()
                } else {
                    format!("wait parity {parity}: passes")
                },
                &format!(
                    "phase {use_} of k_full[{slot}] has completed: tile {} is in slot {slot}",
                    r.tile
                ),
                width,
            ),
            (Who::Consumers, RowKind::Release) => arrow(
                consumers_x,
                empty_x(slot),
                y,
                false,
                &format!("{consumer_warps} arrive: phase {use_} done"),
                &format!(
                    "lane 0 of each consumer warp: mbarrier_arrive(&k_empty[{slot}]), after its wgmmas on tile {} completed; the last arrival completes phase {use_} (parity {})",
                    r.tile,
                    use_ % 2
                ),
                width,
            ),
            _ => continue,
        };
        body = body.add(g);
    }

    // Legend.
    let mut ly = bottom + 22.0;
    let mut x = MARGIN;
    for (fill, label) in [
        (parity_fill(0), "phase of parity 0 in progress"),
        (parity_fill(1), "parity 1"),
        (WAITING, "blocked in a wait"),
        (READING, "wgmmas read the slot"),
    ] {
        (body, x) = swatch(body, x, ly, fill, label);
    }
    for l in [
        "Lilac, on the copy engine: a tile's copies in flight. V's ring has the same barriers",
        "and the same protocol; the consumers release K after S = Q K^T, and V after P V.",
    ] {
        ly += 18.0;
        body = body.add(text(MARGIN, ly, 12, l));
    }
    let height = (ly + MARGIN).ceil();
    document(
        width,
        height,
        "Stage 12: the full and empty barriers of K's ring",
        body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_protocol_never_deadlocks_and_every_wait_is_for_its_own_phase() {
        for nstages in 1..=3 {
            for n_tiles in 0..=5 {
                for tensors in 1..=2 {
                    for warps in 1..=2 {
                        let ring = Ring::kernel(nstages, n_tiles, tensors, warps);
                        explore(ring).unwrap_or_else(|e| {
                            panic!("NSTAGES {nstages}, {n_tiles} tiles, {tensors} tensors, {warps} warps: {e}")
                        });
                    }
                }
            }
        }
        // Three warps on a short ring: the arrivals of an empty barrier in every order.
        explore(Ring::kernel(2, 4, 1, 3)).unwrap();
    }

    #[test]
    fn fa3s_fresh_barrier_parity_is_the_same_protocol() {
        for nstages in 1..=3 {
            for n_tiles in 0..=5 {
                let ring = Ring {
                    empty_parity: empty_parity_fresh_barrier,
                    ..Ring::kernel(nstages, n_tiles, 2, 2)
                };
                explore(ring).unwrap();
            }
        }
    }

    #[test]
    fn the_wrong_parities_are_caught() {
        // The empty wait for the parity of the phase being filled: the first one waits
        // for a release that never comes.
        let e = explore(Ring {
            empty_parity: |u| Some(u % 2),
            ..Ring::kernel(2, 3, 1, 2)
        })
        .unwrap_err();
        assert!(e.starts_with("deadlock"), "{e}");
        // The full wait one phase off passes on a fresh barrier, before the bytes are in.
        let e = explore(Ring {
            full_parity: |u| (u + 1) % 2,
            ..Ring::kernel(2, 3, 1, 2)
        })
        .unwrap_err();
        assert!(e.contains("passed with 0 phases"), "{e}");
        // No empty barrier at all: the producer overwrites a slot still being read.
        let e = explore(Ring {
            empty_parity: |_| None,
            ..Ring::kernel(2, 3, 1, 2)
        })
        .unwrap_err();
        assert!(e.contains("still needs tile 0"), "{e}");
    }

    #[test]
    fn the_figures_run_blocks_at_every_wait_and_ends_clean() {
        let rows = sequence(2, 4, 8).unwrap();
        let blocks = rows
            .iter()
            .filter(|r| matches!(r.kind, RowKind::Blocks { .. }))
            .count();
        let passes = rows
            .iter()
            .filter(|r| matches!(r.kind, RowKind::Passes { .. }))
            .count();
        // Producer: tiles 2 and 3 wait; consumers: all 4 tiles.
        assert_eq!((blocks, passes), (6, 6));
        let last = rows.last().unwrap();
        assert_eq!(
            (last.full_done.clone(), last.empty_done.clone()),
            (vec![2, 2], vec![2, 2])
        );
        // Every wait in the figure names the kernel's parity.
        for r in &rows {
            let use_ = r.tile / 2;
            if let RowKind::Blocks { parity } | RowKind::Passes { parity, .. } = r.kind {
                let expected = match r.who {
                    Who::Producer => empty_parity(use_).unwrap(),
                    _ => full_parity(use_),
                };
                assert_eq!(parity, expected, "{r:?}");
            }
        }
    }

    #[test]
    fn the_figure_fits_the_column_with_text_of_11px_or_more() {
        let svg = full_empty_svg(2, 4, 8);
        assert!(svg.contains(r#"width="740""#));
        for (i, _) in svg.match_indices("font-size=\"") {
            let size: u32 = svg[i + 11..].split('"').next().unwrap().parse().unwrap();
            assert!(size >= 11, "font-size {size}");
        }
        assert!(svg.contains("8 arrive: phase 1 done"));
    }
}
