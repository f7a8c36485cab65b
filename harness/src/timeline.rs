//! Measured timelines, the host side of `kernel-headers/include/flashlab/timeline.cuh`.
//!
//! A stage's timeline kernels have lane 0 of each warpgroup of the first
//! [`TimelineRequest::blocks`] blocks record, for every phase of every iteration, when it
//! started and ended, in the SM's cycles ([`Phase`], [`RawEvent`]); the backward's (stage
//! 23) record its load warp, its dQ writer warp and its two MMA warpgroups. [`run_stage`]
//! passes them a zeroed buffer when [`RunOptions::timeline`] asks for one (the run is
//! checked against the oracle like any other) and returns it in [`Outputs::timeline`], as
//! the backward run does with [`BackwardOptions::timeline`];
//! [`Timeline::from_buffer`] reads it and puts every event on one nanosecond clock with the
//! two [`Phase::Clock`] records each warpgroup makes, so blocks on different SMs line up.
//! `flashlab timeline N` draws the result.
//!
//! [`run_stage`]: crate::run::run_stage
//! [`RunOptions::timeline`]: crate::run::RunOptions::timeline
//! [`Outputs::timeline`]: crate::run::Outputs::timeline
//! [`BackwardOptions::timeline`]: crate::backward::run::BackwardOptions::timeline

use crate::{DType, Error, Problem, Result, StageInfo};
use serde::Serialize;

/// Warpgroup slots per recorded block (`TIMELINE_WARPGROUPS` in timeline.cuh). The
/// backward's: 0 its load warp, 1 its dQ writer warp, 2 and 3 its MMA warpgroups.
pub const WARPGROUP_SLOTS: u32 = 4;
/// Bytes of one `TimelineEvent`.
pub const EVENT_BYTES: usize = 32;
/// The event as the buffer's `u64` words: start, end, (block, iteration), (sm, warpgroup,
/// phase, reserved).
pub const EVENT_WORDS: usize = EVENT_BYTES / 8;
/// The dtypes and head dims the timeline kernels are exported for
/// (`FLASHLAB_EXPORT_TIMELINE_TMA` in timeline.cuh).
pub const DTYPES: &[DType] = &[DType::Bf16];
pub const HEAD_DIMS: &[usize] = &[64, 128];

/// The prefix of a stage's timeline kernels: `wgmma` -> `wgmma_timeline`, so
/// `wgmma_timeline_bf16_d128` (`FLASHLAB_EXPORT_TIMELINE_TMA`).
pub fn kernel_prefix(prefix: &str) -> String {
    format!("{prefix}_timeline")
}

/// Whether an exported kernel is a timeline kernel, not one the bench times.
pub fn is_timeline_kernel(name: &str) -> bool {
    name.contains("_timeline_")
}

// ANCHOR: phases
/// What a warpgroup is doing: `enum class Phase` of timeline.cuh, number for number (a
/// test reads the header and holds the two to each other).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Not a phase: start is `%globaltimer` (ns), end `clock64` at the same moment.
    Clock = 0,
    WaitEmpty = 1,
    Load = 2,
    WaitFull = 3,
    Qk = 4,
    Softmax = 5,
    Pv = 6,
    Sync = 7,
    Epilogue = 8,
    BwdScores = 9,
    BwdP = 10,
    BwdDs = 11,
    BwdGrads = 12,
    DqStore = 13,
    DqReduce = 14,
}
// ANCHOR_END: phases

impl Phase {
    /// Every phase, in the order of their numbers.
    pub const ALL: [Phase; 15] = [
        Phase::Clock,
        Phase::WaitEmpty,
        Phase::Load,
        Phase::WaitFull,
        Phase::Qk,
        Phase::Softmax,
        Phase::Pv,
        Phase::Sync,
        Phase::Epilogue,
        Phase::BwdScores,
        Phase::BwdP,
        Phase::BwdDs,
        Phase::BwdGrads,
        Phase::DqStore,
        Phase::DqReduce,
    ];

    pub fn from_u8(value: u8) -> Option<Phase> {
        Phase::ALL.get(usize::from(value)).copied()
    }

    /// The name in JSON and in the chart's CSS classes: `wait_full`, `qk`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Clock => "clock",
            Phase::WaitEmpty => "wait_empty",
            Phase::Load => "load",
            Phase::WaitFull => "wait_full",
            Phase::Qk => "qk",
            Phase::Softmax => "softmax",
            Phase::Pv => "pv",
            Phase::Sync => "sync",
            Phase::Epilogue => "epilogue",
            Phase::BwdScores => "bwd_scores",
            Phase::BwdP => "bwd_p",
            Phase::BwdDs => "bwd_ds",
            Phase::BwdGrads => "bwd_grads",
            Phase::DqStore => "dq_store",
            Phase::DqReduce => "dq_reduce",
        }
    }

    /// The name a reader sees: `QKᵀ`, `wait full`.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Clock => "clock",
            Phase::WaitEmpty => "wait empty",
            Phase::Load => "load",
            Phase::WaitFull => "wait full",
            Phase::Qk => "QKᵀ",
            Phase::Softmax => "softmax",
            Phase::Pv => "P·V",
            Phase::Sync => "sync",
            Phase::Epilogue => "epilogue",
            Phase::BwdScores => "Sᵀ/dPᵀ",
            Phase::BwdP => "Pᵀ",
            Phase::BwdDs => "dSᵀ",
            Phase::BwdGrads => "dV/dK/dQ",
            Phase::DqStore => "dQ store",
            Phase::DqReduce => "dQ reduce",
        }
    }

    /// What the span measures, in words (timeline.cuh's comments).
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Clock => "a %globaltimer and clock64 pair, for converting cycles to ns",
            Phase::WaitEmpty => "producer: waiting for the consumers to release a ring slot",
            Phase::Load => "producer: issuing a tile's TMA copies",
            Phase::WaitFull => "consumer: waiting for a tile's copies to land",
            Phase::Qk => "consumer: S = Q Kᵀ, from issue until its wgmmas completed",
            Phase::Softmax => "consumer: mask, row max, rescale, P = exp2(S - max)",
            Phase::Pv => "consumer: O += P V, from issue until its wgmmas completed",
            Phase::Sync => "waiting at a barrier for the other warpgroups",
            Phase::Epilogue => {
                "consumer: O normalized and stored (the backward's MMA warpgroups: dK and dV staged in shared memory and stored)"
            }
            Phase::BwdScores => {
                "MMA: Sᵀ = K Qᵀ and dPᵀ = V dOᵀ, from issue until both wgmma groups completed"
            }
            Phase::BwdP => {
                "MMA: Pᵀ recomputed from Sᵀ and the LSE, masked (and packed, at 64 query rows a step)"
            }
            Phase::BwdDs => {
                "MMA: dSᵀ = Pᵀ ∘ (dPᵀ - D), packed and stored for dQ (at 128 query rows, Pᵀ packed and dV issued between)"
            }
            Phase::BwdGrads => {
                "MMA: dV += Pᵀ dO, dK += dSᵀ Q, dQ = dS K, from dV's issue until all three completed"
            }
            Phase::DqStore => {
                "MMA: its half of dQ's tile written to shared memory for the writer (at 64 query rows a step, while dK runs)"
            }
            Phase::DqReduce => {
                "dQ writer: the bulk reduce-add of dQ's tile, until it was read (deterministic: its turn first)"
            }
        }
    }

    /// The tensor-core products, whose spans run from issue to completion and may overlap
    /// other phases of the same warpgroup (stage 16, the overlap inside a warpgroup,
    /// issues S of tile j before P V of tile j - 1 completed; the backward computes Pᵀ
    /// while dPᵀ runs and dSᵀ while dV runs, or at 128 query rows a step stores it).
    pub fn is_gemm(self) -> bool {
        matches!(
            self,
            Phase::Qk | Phase::Pv | Phase::BwdScores | Phase::BwdGrads
        )
    }

    /// The phases only a producer warpgroup (the backward's load warp) records.
    pub fn is_producer(self) -> bool {
        matches!(self, Phase::WaitEmpty | Phase::Load)
    }

    /// The phases only the backward's dQ writer warp records.
    pub fn is_writer(self) -> bool {
        matches!(self, Phase::DqReduce)
    }

    /// The phases only the backward's MMA warpgroups record.
    pub fn is_backward_mma(self) -> bool {
        matches!(
            self,
            Phase::BwdScores | Phase::BwdP | Phase::BwdDs | Phase::BwdGrads | Phase::DqStore
        )
    }
}

/// One record as the device wrote it (`struct TimelineEvent`): times are clock64 cycles
/// of the block's SM, except [`Phase::Clock`]'s start (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RawEvent {
    pub start: u64,
    pub end: u64,
    pub block: u32,
    pub iteration: u32,
    pub sm: u16,
    pub warpgroup: u8,
    /// [`Phase`]'s number.
    pub phase: u8,
}

impl RawEvent {
    /// The event in the buffer's four little-endian words.
    pub fn from_words(w: [u64; EVENT_WORDS]) -> RawEvent {
        RawEvent {
            start: w[0],
            end: w[1],
            block: w[2] as u32,
            iteration: (w[2] >> 32) as u32,
            sm: w[3] as u16,
            warpgroup: (w[3] >> 16) as u8,
            phase: (w[3] >> 24) as u8,
        }
    }

    /// The four words the device writes for this event (synthetic buffers in tests).
    pub fn to_words(&self) -> [u64; EVENT_WORDS] {
        [
            self.start,
            self.end,
            u64::from(self.block) | u64::from(self.iteration) << 32,
            u64::from(self.sm) | u64::from(self.warpgroup) << 16 | u64::from(self.phase) << 24,
        ]
    }

    /// A record the device never wrote (the buffer starts zeroed; a written event has a
    /// nonzero end: a cycle count, or for a clock pair the cycle count beside the time).
    pub fn is_empty(&self) -> bool {
        self.start == 0 && self.end == 0
    }
}

/// What a run records: the first `blocks` blocks of the grid (linear block index
/// `x + gridDim.x * (y + gridDim.y * z)`), every warpgroup of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelineRequest {
    pub blocks: u32,
}

/// Events a warpgroup slot holds for `problem`: 8 per 64 keys (a tile of 64 keys has at
/// most 7 phases, waits and products included, in every stage design) and 16 for the
/// clock pairs, the epilogue and whatever comes before the loop.
pub fn stride_for(problem: &Problem) -> u32 {
    let per_64_keys = problem.shape.seqlen_k.div_ceil(64);
    u32::try_from(8 * per_64_keys + 16).unwrap_or(u32::MAX)
}

/// The same for a backward run, whose blocks loop over query blocks: 10 per 64 query rows
/// of each head that shares a block's K/V head (a step of the backward's MMA warpgroups
/// records 8 phases) and 16 for the clock pairs and the epilogue.
pub fn backward_stride_for(problem: &Problem) -> u32 {
    let s = &problem.shape;
    let steps = (s.heads / s.kv_heads.max(1)) * s.seqlen_q.div_ceil(64);
    u32::try_from(10 * steps + 16).unwrap_or(u32::MAX)
}

/// Refuses a timeline run that cannot be made ([`check`]), or one of no blocks: what the
/// prefill run and the backward run ask before they allocate.
pub(crate) fn check_request(
    info: &StageInfo,
    problem: &Problem,
    request: &TimelineRequest,
) -> Result<()> {
    check(info, problem, [])?;
    if request.blocks == 0 {
        return Err(Error::InvalidProblem(
            "a timeline records at least one block".into(),
        ));
    }
    Ok(())
}

/// The raw buffer of one run: for recorded block `b` and warpgroup slot `w`, `stride`
/// events from event index `(b * WARPGROUP_SLOTS + w) * stride`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineBuffer {
    pub blocks: u32,
    pub stride: u32,
    pub words: Vec<u64>,
}

/// One warpgroup slot's events, in the order the warpgroup recorded them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub block: u32,
    pub warpgroup: u8,
    pub events: Vec<RawEvent>,
    /// Every one of the slot's `stride` events is there: the device drops the events past
    /// a full slot, so later ones may be missing.
    pub truncated: bool,
}

impl TimelineBuffer {
    /// `u64` words of a buffer of `blocks` blocks of `stride` events per warpgroup slot.
    pub fn words_for(blocks: u32, stride: u32) -> usize {
        blocks as usize * WARPGROUP_SLOTS as usize * stride as usize * EVENT_WORDS
    }

    pub fn bytes_for(blocks: u32, stride: u32) -> usize {
        Self::words_for(blocks, stride) * 8
    }

    /// A buffer as the run hands it to the device: all zeros.
    pub fn zeroed(blocks: u32, stride: u32) -> TimelineBuffer {
        TimelineBuffer {
            blocks,
            stride,
            words: vec![0; Self::words_for(blocks, stride)],
        }
    }

    /// Event `k` of slot (`block`, `warpgroup`).
    fn event_words(&self, block: u32, warpgroup: u32, k: u32) -> [u64; EVENT_WORDS] {
        let index = (block as usize * WARPGROUP_SLOTS as usize + warpgroup as usize)
            * self.stride as usize
            + k as usize;
        let w = &self.words[index * EVENT_WORDS..(index + 1) * EVENT_WORDS];
        [w[0], w[1], w[2], w[3]]
    }

    /// Writes `events` into slot (`block`, `warpgroup`) as the device would, dropping
    /// those past the slot's capacity (synthetic buffers in tests).
    pub fn put_slot(&mut self, block: u32, warpgroup: u32, events: &[RawEvent]) {
        for (k, e) in events.iter().take(self.stride as usize).enumerate() {
            let index = (block as usize * WARPGROUP_SLOTS as usize + warpgroup as usize)
                * self.stride as usize
                + k;
            self.words[index * EVENT_WORDS..(index + 1) * EVENT_WORDS]
                .copy_from_slice(&e.to_words());
        }
    }

    /// Every slot that holds an event, block by block. A slot's events are the ones before
    /// its first empty record; each must name its own slot's block and warpgroup and a
    /// known phase, or the buffer's layout and timeline.cuh's disagree.
    pub fn slots(&self) -> Result<Vec<Slot>> {
        if self.words.len() != Self::words_for(self.blocks, self.stride) {
            return Err(Error::BadTimeline(format!(
                "{} words for {} blocks of {} events per warpgroup, which need {}",
                self.words.len(),
                self.blocks,
                self.stride,
                Self::words_for(self.blocks, self.stride)
            )));
        }
        let mut slots = Vec::new();
        for block in 0..self.blocks {
            for warpgroup in 0..WARPGROUP_SLOTS {
                let mut events = Vec::new();
                for k in 0..self.stride {
                    let e = RawEvent::from_words(self.event_words(block, warpgroup, k));
                    if e.is_empty() {
                        break;
                    }
                    if e.block != block || u32::from(e.warpgroup) != warpgroup {
                        return Err(Error::BadTimeline(format!(
                            "the slot of block {block} warpgroup {warpgroup} holds, as its event {k}, an event of block {} warpgroup {}",
                            e.block, e.warpgroup
                        )));
                    }
                    if Phase::from_u8(e.phase).is_none() {
                        return Err(Error::BadTimeline(format!(
                            "event {k} of block {block} warpgroup {warpgroup} has phase {}, which timeline.cuh does not define",
                            e.phase
                        )));
                    }
                    events.push(e);
                }
                if !events.is_empty() {
                    slots.push(Slot {
                        block,
                        warpgroup: warpgroup as u8,
                        truncated: events.len() == self.stride as usize,
                        events,
                    });
                }
            }
        }
        Ok(slots)
    }
}

/// An SM's cycle counter against the GPU's nanosecond clock: two (ns, cycle) pairs read
/// at the same moments give a line, `ns = ns0 + (cycle - cycle0) * ns_per_cycle`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ClockFit {
    pub ns0: u64,
    pub cycle0: u64,
    pub ns_per_cycle: f64,
}

impl ClockFit {
    /// The line through `(ns, cycle)` pairs `first` and `last`; `None` unless both clocks
    /// moved forward between them.
    pub fn through(first: (u64, u64), last: (u64, u64)) -> Option<ClockFit> {
        let (ns0, cycle0) = first;
        let (ns1, cycle1) = last;
        (ns1 > ns0 && cycle1 > cycle0).then(|| ClockFit {
            ns0,
            cycle0,
            ns_per_cycle: (ns1 - ns0) as f64 / (cycle1 - cycle0) as f64,
        })
    }

    /// Nanoseconds after `origin_ns` (a `%globaltimer` value) at `cycle`. The difference
    /// is taken in integers first: `%globaltimer` counts from far back, past what an f64
    /// holds to the nanosecond.
    pub fn ns_since(&self, origin_ns: u64, cycle: u64) -> f64 {
        (i128::from(self.ns0) - i128::from(origin_ns)) as f64
            + (i128::from(cycle) - i128::from(self.cycle0)) as f64 * self.ns_per_cycle
    }

    pub fn ghz(&self) -> f64 {
        1.0 / self.ns_per_cycle
    }
}

/// What a warpgroup (or warp) does: a producer records [`Phase::WaitEmpty`] or
/// [`Phase::Load`]; the backward's dQ writer [`Phase::DqReduce`]; the backward's MMA
/// warpgroups its products ([`Phase::is_backward_mma`]); every other warpgroup consumes the
/// tiles of a forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Producer,
    Writer,
    Consumer,
    Mma,
}

impl Role {
    /// Every role, in the order the summary lists them.
    pub const ALL: [Role; 4] = [Role::Producer, Role::Writer, Role::Consumer, Role::Mma];

    pub fn name(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Writer => "dQ writer",
            Role::Consumer => "consumer",
            Role::Mma => "MMA",
        }
    }

    /// The role of a lane that recorded `phases`.
    pub fn of(phases: impl IntoIterator<Item = Phase>) -> Role {
        let phases: Vec<Phase> = phases.into_iter().collect();
        if phases.iter().any(|p| p.is_producer()) {
            Role::Producer
        } else if phases.iter().any(|p| p.is_writer()) {
            Role::Writer
        } else if phases.iter().any(|p| p.is_backward_mma()) {
            Role::Mma
        } else {
            Role::Consumer
        }
    }
}

/// One phase of one iteration, on the timeline's clock.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Span {
    pub phase: Phase,
    /// The K/V tile (the backward: the block's step, a query block); the epilogue records
    /// the number of tiles (steps).
    pub iteration: u32,
    /// Nanoseconds since [`Timeline::origin_ns`].
    pub start_ns: f64,
    pub end_ns: f64,
    /// As recorded: clock64 cycles of the block's SM.
    pub start_cycle: u64,
    pub end_cycle: u64,
}

impl Span {
    pub fn duration_ns(&self) -> f64 {
        self.end_ns - self.start_ns
    }
}

/// One warpgroup of one recorded block (or one warp: the backward's load and dQ writer).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lane {
    pub block: u32,
    /// Its slot: the block's warpgroup; in the backward 0 the load warp, 1 the dQ writer
    /// warp, 2 and 3 the MMA warpgroups.
    pub warpgroup: u8,
    pub sm: u16,
    pub role: Role,
    /// Its SM's line from cycles to ns (every warpgroup on an SM shares it).
    pub clock: ClockFit,
    /// The clock pairs the warpgroup recorded: 2, one at its start and one at its end,
    /// unless its slot was full.
    pub clock_pairs: usize,
    /// The cycle length measured on its SM alone, in GHz: `None` when the SM's pairs
    /// span no `%globaltimer` tick (a lone warpgroup cut short, say).
    pub sm_ghz: Option<f64>,
    pub truncated: bool,
    /// From its first clock pair to its last event, ns since [`Timeline::origin_ns`].
    pub start_ns: f64,
    pub end_ns: f64,
    /// Every event but the clock pairs, in the order recorded.
    pub spans: Vec<Span>,
}

impl Lane {
    /// `consumer 1`, or `producer`: the lane's name in the chart and the summary. The
    /// backward's MMA warpgroups are `MMA 0` and `MMA 1` (slots 2 and 3), as its kernel
    /// numbers them (`BackwardMma`: warpgroup `wg` owns keys 64 wg to 64 wg + 63).
    pub fn name(&self) -> String {
        match self.role {
            Role::Producer => "producer".to_string(),
            Role::Writer => "dQ writer".to_string(),
            Role::Consumer => format!("consumer {}", self.warpgroup),
            Role::Mma => format!("MMA {}", self.warpgroup.saturating_sub(2)),
        }
    }

    /// The spans of one phase, in the order recorded.
    pub fn spans_of(&self, phase: Phase) -> impl Iterator<Item = &Span> {
        self.spans.iter().filter(move |s| s.phase == phase)
    }
}

/// A run's recorded warpgroups on one clock: nanoseconds since the earliest first clock
/// pair of any of them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timeline {
    pub blocks: u32,
    pub stride: u32,
    /// The `%globaltimer` value that is 0 ns.
    pub origin_ns: u64,
    /// The cycle length every SM's line uses, pooled over the SMs ([`Timeline::from_slots`]).
    pub ns_per_cycle: f64,
    pub lanes: Vec<Lane>,
}

impl Timeline {
    /// Reads a run's buffer ([`TimelineBuffer::slots`]) and puts every event on one ns
    /// clock ([`Timeline::from_slots`]).
    pub fn from_buffer(buffer: &TimelineBuffer) -> Result<Timeline> {
        Self::from_slots(buffer.blocks, buffer.stride, &buffer.slots()?)
    }

    /// Converts cycles to ns with the clock pairs ([`Phase::Clock`]: a `%globaltimer` value
    /// and `clock64` at the same moment) each warpgroup records at its start and end.
    ///
    /// The warpgroups on one SM read one cycle counter, so they get one line: fitted to
    /// all their pairs, it keeps them exactly in step with each other (a producer's load
    /// and the consumer's wait for it) whatever `%globaltimer`'s steps, which a line per
    /// warpgroup would not. Its slope is the cycle length of the whole GPU, whose SMs run
    /// at one clock: the sum of each SM's span in ns over the sum of its span in cycles
    /// (from its earliest pair to its latest), which averages `%globaltimer`'s steps over
    /// every SM. A warpgroup whose slot was full has lost its last pair; its SM's other
    /// pairs, or the GPU's slope, still place it.
    pub fn from_slots(blocks: u32, stride: u32, slots: &[Slot]) -> Result<Timeline> {
        use std::collections::BTreeMap;
        let clocks = |slot: &Slot| -> Vec<(u64, u64)> {
            slot.events
                .iter()
                .filter(|e| e.phase == Phase::Clock as u8)
                .map(|e| (e.start, e.end))
                .collect()
        };
        let mut pairs: BTreeMap<u16, Vec<(u64, u64)>> = BTreeMap::new();
        for slot in slots {
            let c = clocks(slot);
            if c.is_empty() {
                return Err(Error::BadTimeline(format!(
                    "block {} warpgroup {} recorded no clock pair",
                    slot.block, slot.warpgroup
                )));
            }
            pairs.entry(slot.events[0].sm).or_default().extend(c);
        }
        // Each SM's span, from its earliest pair to its latest (by cycle).
        let span = |p: &[(u64, u64)]| {
            let first = *p.iter().min_by_key(|(_, cycle)| *cycle)?;
            let last = *p.iter().max_by_key(|(_, cycle)| *cycle)?;
            ClockFit::through(first, last).map(|_| (last.0 - first.0, last.1 - first.1))
        };
        let sm_spans: BTreeMap<u16, (u64, u64)> = pairs
            .iter()
            .filter_map(|(sm, p)| Some((*sm, span(p)?)))
            .collect();
        let (ns, cycles) = sm_spans.values().fold((0u128, 0u128), |(n, c), &(dn, dc)| {
            (n + u128::from(dn), c + u128::from(dc))
        });
        if cycles == 0 {
            return Err(Error::BadTimeline(
                "no SM's warpgroups recorded two clock pairs a %globaltimer step apart, so cycles cannot be put on the GPU's clock".into(),
            ));
        }
        let ns_per_cycle = ns as f64 / cycles as f64;
        // Each SM's line: that slope, through the mean of its pairs.
        let fits: BTreeMap<u16, ClockFit> = pairs
            .iter()
            .map(|(&sm, p)| {
                let cycle0 = p.iter().map(|&(_, c)| c).min().expect("a pair");
                let base = p.iter().map(|&(n, _)| n).min().expect("a pair");
                let offset = p
                    .iter()
                    .map(|&(n, c)| (n - base) as f64 - (c - cycle0) as f64 * ns_per_cycle)
                    .sum::<f64>()
                    / p.len() as f64;
                let ns0 = (i128::from(base) + offset.round() as i128).max(0) as u64;
                (
                    sm,
                    ClockFit {
                        ns0,
                        cycle0,
                        ns_per_cycle,
                    },
                )
            })
            .collect();
        let origin_ns = fits.values().map(|f| f.ns0).min().unwrap_or(0);

        let lanes = slots
            .iter()
            .map(|slot| {
                let sm = slot.events[0].sm;
                let clock = fits[&sm];
                let spans: Vec<Span> = slot
                    .events
                    .iter()
                    .filter(|e| e.phase != Phase::Clock as u8)
                    .map(|e| Span {
                        phase: Phase::from_u8(e.phase).expect("slots() checked the phase"),
                        iteration: e.iteration,
                        start_ns: clock.ns_since(origin_ns, e.start),
                        end_ns: clock.ns_since(origin_ns, e.end),
                        start_cycle: e.start,
                        end_cycle: e.end,
                    })
                    .collect();
                let own = clocks(slot);
                let start_ns = clock.ns_since(origin_ns, own[0].1);
                let end_ns = spans
                    .iter()
                    .map(|s| s.end_ns)
                    .chain(
                        own.last()
                            .map(|&(_, cycle)| clock.ns_since(origin_ns, cycle)),
                    )
                    .fold(start_ns, f64::max);
                let role = Role::of(spans.iter().map(|s| s.phase));
                Lane {
                    block: slot.block,
                    warpgroup: slot.warpgroup,
                    sm,
                    role,
                    clock,
                    clock_pairs: own.len(),
                    sm_ghz: sm_spans
                        .get(&sm)
                        .map(|&(ns, cycles)| cycles as f64 / ns as f64),
                    truncated: slot.truncated,
                    start_ns,
                    end_ns,
                    spans,
                }
            })
            .collect();
        Ok(Timeline {
            blocks,
            stride,
            origin_ns,
            ns_per_cycle,
            lanes,
        })
    }

    /// From the first lane's start to the last lane's end, ns.
    pub fn duration_ns(&self) -> f64 {
        let start = self
            .lanes
            .iter()
            .map(|l| l.start_ns)
            .fold(f64::INFINITY, f64::min);
        let end = self.lanes.iter().map(|l| l.end_ns).fold(0.0, f64::max);
        if self.lanes.is_empty() {
            0.0
        } else {
            end - start
        }
    }

    /// The lanes whose slots were full (some events may be missing).
    pub fn truncated(&self) -> impl Iterator<Item = &Lane> {
        self.lanes.iter().filter(|l| l.truncated)
    }
}

/// One phase of one role over every recorded warpgroup of that role.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseStat {
    pub role: Role,
    pub phase: Phase,
    pub count: usize,
    pub mean_ns: f64,
    /// Of the warpgroups' time (each from its first clock pair to its end), the part
    /// spent in this phase. The products may overlap other phases, so a role's shares
    /// can add up to more than 1.
    pub share: f64,
}

/// Each role's phases: how many, how long on average, what share of the role's time.
pub fn summarize(timeline: &Timeline) -> Vec<PhaseStat> {
    let mut stats = Vec::new();
    for role in Role::ALL {
        let lanes: Vec<&Lane> = timeline.lanes.iter().filter(|l| l.role == role).collect();
        let lane_ns: f64 = lanes.iter().map(|l| l.end_ns - l.start_ns).sum();
        for phase in Phase::ALL.into_iter().filter(|&p| p != Phase::Clock) {
            let durations: Vec<f64> = lanes
                .iter()
                .flat_map(|l| l.spans_of(phase))
                .map(Span::duration_ns)
                .collect();
            if durations.is_empty() {
                continue;
            }
            let total: f64 = durations.iter().sum();
            stats.push(PhaseStat {
                role,
                phase,
                count: durations.len(),
                mean_ns: total / durations.len() as f64,
                share: if lane_ns > 0.0 { total / lane_ns } else { 0.0 },
            });
        }
    }
    stats
}

/// The head dims a stage's timeline kernels are built for: those its ptxas report names
/// (`<prefix>_timeline_bf16_d<D>`; stage 18 adds 256), or [`HEAD_DIMS`], which every
/// timeline stage builds, where the stage was built without nvcc.
pub fn timeline_head_dims(info: &StageInfo) -> Vec<usize> {
    // The ptxas report alone names the kernels; the SASS counts `resources()` adds are not needed.
    let mut dims: Vec<usize> = kernel_build::parse_ptxas_report(info.kernels.ptxas_report)
        .iter()
        .filter_map(|r| r.kernel.split("_timeline_bf16_d").nth(1)?.parse().ok())
        .collect();
    dims.sort_unstable();
    dims.dedup();
    if dims.is_empty() {
        HEAD_DIMS.to_vec()
    } else {
        dims
    }
}

/// Refuses a timeline run that cannot be made: a stage without timeline kernels (naming
/// those of `stages` that have them), a dtype or head dim they are not built for, or a
/// problem the stage refuses anyway.
pub fn check<'a>(
    info: &StageInfo,
    problem: &Problem,
    stages: impl IntoIterator<Item = &'a StageInfo>,
) -> Result<()> {
    if !info.timeline {
        return Err(Error::NoTimeline {
            stage: info.label(),
            with_timeline: stages
                .into_iter()
                .filter(|s| s.timeline)
                .map(|s| s.number)
                .collect(),
        });
    }
    problem.validate()?;
    info.check_kernel_variant(problem.shape.head_dim, problem.dtype)?;
    if !DTYPES.contains(&problem.dtype) {
        let names: Vec<_> = DTYPES.iter().map(|d| d.name()).collect();
        return Err(Error::Unsupported {
            stage: info.label(),
            what: format!("dtype {} in its timeline kernels", problem.dtype),
            supported: format!("{} there (run it with --dtype bf16)", names.join(", ")),
        });
    }
    let head_dims = timeline_head_dims(info);
    if !head_dims.contains(&problem.shape.head_dim) {
        return Err(Error::Unsupported {
            stage: info.label(),
            what: format!(
                "head dim {} in its timeline kernels",
                problem.shape.head_dim
            ),
            supported: format!("head dims {head_dims:?} there"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GpuArch, KernelBundle, TensorCores};

    /// timeline.cuh, read from the shared headers' crate.
    fn header() -> String {
        let path = flashlab_kernel_headers::include_dir_for(std::path::Path::new(env!(
            "CARGO_MANIFEST_DIR"
        )))
        .join("flashlab/timeline.cuh");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// `enum class Phase` of timeline.cuh, name and number for name and number: a phase
    /// renumbered on one side only would have every span drawn as another phase.
    #[test]
    fn phases_match_the_header() {
        let header = header();
        let body = header
            .split("enum class Phase")
            .nth(1)
            .and_then(|rest| rest.split("};").next())
            .expect("timeline.cuh declares enum class Phase");
        let declared: Vec<(String, u8)> = body
            .lines()
            .filter_map(|line| {
                let code = line.split("//").next()?.trim().trim_end_matches(',');
                let (name, value) = code.split_once('=')?;
                Some((name.trim().to_string(), value.trim().parse().ok()?))
            })
            .collect();
        let ours: Vec<(String, u8)> = Phase::ALL
            .iter()
            .map(|&p| (format!("{p:?}"), p as u8))
            .collect();
        assert_eq!(declared, ours);
        for (i, p) in Phase::ALL.iter().enumerate() {
            assert_eq!(Phase::from_u8(i as u8), Some(*p));
        }
        assert_eq!(Phase::from_u8(Phase::ALL.len() as u8), None);
        assert!(header.contains("sizeof(TimelineEvent) == 32"));
        assert!(header.contains(&format!(
            "constexpr int TIMELINE_WARPGROUPS = {WARPGROUP_SLOTS};"
        )));
    }

    /// The bytes of one event as nvcc lays out `struct TimelineEvent` (little-endian:
    /// start, end, block, iteration, sm, warpgroup, phase, reserved).
    #[test]
    fn an_event_reads_from_its_32_bytes() {
        let mut bytes = Vec::new();
        bytes.extend(1_000_000_123u64.to_le_bytes());
        bytes.extend(1_000_000_456u64.to_le_bytes());
        bytes.extend(7u32.to_le_bytes());
        bytes.extend(5u32.to_le_bytes());
        bytes.extend(131u16.to_le_bytes());
        bytes.push(2);
        bytes.push(Phase::Pv as u8);
        bytes.extend(0u32.to_le_bytes());
        assert_eq!(bytes.len(), EVENT_BYTES);
        let words: Vec<u64> = bytes
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let e = RawEvent::from_words(words.clone().try_into().unwrap());
        assert_eq!(
            e,
            RawEvent {
                start: 1_000_000_123,
                end: 1_000_000_456,
                block: 7,
                iteration: 5,
                sm: 131,
                warpgroup: 2,
                phase: 6,
            }
        );
        assert_eq!(e.to_words().to_vec(), words);
    }

    #[test]
    fn timeline_kernels_are_named_by_their_prefix() {
        let name = crate::kernels::kernel_name(&kernel_prefix("wgmma"), DType::Bf16, 128);
        assert_eq!(name, "wgmma_timeline_bf16_d128");
        assert!(is_timeline_kernel(&name));
        assert!(!is_timeline_kernel("wgmma_bf16_d128"));
    }

    #[test]
    fn the_stride_grows_with_the_keys() {
        let p = |seqlen| Problem::new(1, 1, seqlen, 128);
        assert_eq!(stride_for(&p(1)), 24);
        assert_eq!(stride_for(&p(1024)), 8 * 16 + 16);
        assert_eq!(stride_for(&p(16384)), 8 * 256 + 16);
        assert_eq!(TimelineBuffer::bytes_for(3, 144), 3 * 4 * 144 * 32);
    }

    fn event(block: u32, wg: u8, phase: Phase, iteration: u32, start: u64, end: u64) -> RawEvent {
        RawEvent {
            start,
            end,
            block,
            iteration,
            sm: 10 + block as u16,
            warpgroup: wg,
            phase: phase as u8,
        }
    }

    /// A consumer of a stage-11-like kernel: a clock pair at `ns0` and cycle `c0`, then
    /// per tile wait full, QKᵀ, softmax, P·V of 100, 400, 300, 200 cycles, then a last
    /// clock pair after `ns_per_cycle` ns per cycle.
    fn consumer(
        block: u32,
        wg: u8,
        tiles: u32,
        ns0: u64,
        c0: u64,
        ns_per_cycle: f64,
    ) -> Vec<RawEvent> {
        let mut events = vec![event(block, wg, Phase::Clock, 0, ns0, c0)];
        let mut c = c0 + 50;
        for t in 0..tiles {
            for (phase, len) in [
                (Phase::WaitFull, 100),
                (Phase::Qk, 400),
                (Phase::Softmax, 300),
                (Phase::Pv, 200),
            ] {
                events.push(event(block, wg, phase, t, c, c + len));
                c += len;
            }
        }
        events.push(event(block, wg, Phase::Epilogue, tiles, c, c + 500));
        c += 500;
        let ns = ns0 + ((c - c0) as f64 * ns_per_cycle).round() as u64;
        events.push(event(block, wg, Phase::Clock, 0, ns, c));
        events
    }

    #[test]
    fn slots_hold_the_events_before_the_first_empty_record() {
        let mut buf = TimelineBuffer::zeroed(2, 32);
        let a = consumer(0, 0, 3, 5_000, 1_000, 0.5);
        let b = consumer(1, 1, 2, 5_400, 90_000, 0.5);
        buf.put_slot(0, 0, &a);
        buf.put_slot(1, 1, &b);
        let slots = buf.slots().unwrap();
        assert_eq!(slots.len(), 2);
        assert_eq!((slots[0].block, slots[0].warpgroup), (0, 0));
        assert_eq!(slots[0].events, a);
        assert_eq!((slots[1].block, slots[1].warpgroup), (1, 1));
        assert_eq!(slots[1].events.len(), 2 + 2 * 4 + 1);
        assert!(!slots[0].truncated && !slots[1].truncated);
    }

    #[test]
    fn a_full_slot_is_reported_as_cut() {
        let mut buf = TimelineBuffer::zeroed(1, 8);
        buf.put_slot(0, 1, &consumer(0, 1, 4, 5_000, 1_000, 0.5));
        let slots = buf.slots().unwrap();
        assert_eq!(slots[0].events.len(), 8);
        assert!(slots[0].truncated);
    }

    #[test]
    fn an_event_in_the_wrong_slot_is_an_error() {
        let mut buf = TimelineBuffer::zeroed(2, 16);
        buf.put_slot(1, 0, &consumer(0, 0, 1, 5_000, 1_000, 0.5));
        let err = buf.slots().unwrap_err().to_string();
        assert!(
            err.contains(
                "block 1 warpgroup 0 holds, as its event 0, an event of block 0 warpgroup 0"
            ),
            "{err}"
        );
        let mut bad = TimelineBuffer::zeroed(1, 16);
        bad.put_slot(
            0,
            0,
            &[
                event(0, 0, Phase::Clock, 0, 1, 2),
                RawEvent {
                    phase: 42,
                    ..event(0, 0, Phase::Qk, 0, 3, 4)
                },
            ],
        );
        let err = bad.slots().unwrap_err().to_string();
        assert!(err.contains("phase 42"), "{err}");
    }

    #[test]
    fn the_clock_fit_is_the_line_through_both_pairs() {
        let fit = ClockFit::through((1_000, 10_000), (2_000, 12_000)).unwrap();
        assert_eq!(fit.ns_per_cycle, 0.5);
        assert_eq!(fit.ghz(), 2.0);
        assert_eq!(fit.ns_since(1_000, 11_000), 500.0);
        assert_eq!(fit.ns_since(400, 9_000), 100.0);
        assert!(ClockFit::through((1_000, 10_000), (1_000, 12_000)).is_none());
        assert!(ClockFit::through((1_000, 10_000), (2_000, 9_000)).is_none());
        // Nanosecond exact where an f64 of the raw value would not be.
        let big = 1_750_000_000_000_000_123u64;
        let fit = ClockFit::through((big, 5), (big + 1_000, 1_005)).unwrap();
        assert_eq!(fit.ns_since(big - 3, 6), 4.0);
    }

    #[test]
    fn events_land_on_one_clock_across_sms() {
        let mut buf = TimelineBuffer::zeroed(2, 64);
        // Block 0 on SM 10 from 10 µs; block 1 on SM 11, whose counter is elsewhere,
        // starting 300 ns later; both at 2 GHz.
        buf.put_slot(0, 0, &consumer(0, 0, 2, 10_000, 1_000, 0.5));
        buf.put_slot(1, 0, &consumer(1, 0, 2, 10_300, 77_000, 0.5));
        let t = Timeline::from_buffer(&buf).unwrap();
        assert_eq!(t.origin_ns, 10_000);
        assert_eq!(t.ns_per_cycle, 0.5);
        let (a, b) = (&t.lanes[0], &t.lanes[1]);
        assert_eq!((a.sm_ghz, b.sm_ghz), (Some(2.0), Some(2.0)));
        assert_eq!((a.clock_pairs, b.clock_pairs), (2, 2));
        assert_eq!(
            (a.sm, b.sm, a.role, a.name()),
            (10, 11, Role::Consumer, "consumer 0".into())
        );
        // Block 0's first QKᵀ: cycles 1150..1550, so 75..275 ns.
        let qk = a.spans_of(Phase::Qk).next().unwrap();
        assert_eq!((qk.start_cycle, qk.end_cycle), (1_150, 1_550));
        assert_eq!((qk.start_ns, qk.end_ns), (75.0, 275.0));
        // Block 1's: 150 cycles after its first pair, which is 300 ns after block 0's.
        let qk = b.spans_of(Phase::Qk).next().unwrap();
        assert_eq!((qk.start_ns, qk.end_ns), (375.0, 575.0));
        assert_eq!((a.start_ns, b.start_ns), (0.0, 300.0));
        // 2 tiles of 1000 cycles, 50 before and the epilogue's 500: 2550 cycles, 1275 ns.
        assert_eq!(a.end_ns, 1_275.0);
        assert_eq!(a.spans.len(), 2 * 4 + 1);
        assert_eq!(t.duration_ns(), 1_575.0);
    }

    /// `%globaltimer` moves in steps; each SM's own span then gives a rough cycle length,
    /// and the GPU's one clock a better one: the spans' sum over the cycles' sum.
    #[test]
    fn the_cycle_length_is_pooled_over_the_sms() {
        let mut buf = TimelineBuffer::zeroed(2, 8);
        let pair = |block, ns, cycle| event(block, 0, Phase::Clock, 0, ns, cycle);
        buf.put_slot(0, 0, &[pair(0, 10_000, 1_000), pair(0, 11_000, 2_600)]);
        buf.put_slot(1, 0, &[pair(1, 10_000, 500), pair(1, 13_000, 6_900)]);
        let t = Timeline::from_buffer(&buf).unwrap();
        // 1000 ns in 1600 cycles and 3000 ns in 6400: 4000 ns in 8000 cycles.
        assert_eq!(t.ns_per_cycle, 0.5);
        assert_eq!(t.lanes[0].sm_ghz, Some(1.6));
        assert!((t.lanes[1].sm_ghz.unwrap() - 6_400.0 / 3_000.0).abs() < 1e-12);
        // Each SM's line has that slope, through the mean of its pairs: SM 10's pairs lie
        // 0 and +200 ns off a line through the first, so it passes 100 ns above that
        // pair; SM 11's, 0 and -200 ns off, 100 ns below.
        assert_eq!(t.lanes[0].clock.ns0, 10_100);
        assert_eq!(t.lanes[1].clock.ns0, 9_900);
        assert_eq!(t.origin_ns, 9_900);
    }

    /// Warpgroups on one SM share its cycle counter: the same cycle is the same ns in each,
    /// though `%globaltimer` had not moved between their first pairs.
    #[test]
    fn warpgroups_of_one_sm_stay_in_step() {
        let mut buf = TimelineBuffer::zeroed(1, 8);
        let e = |wg, phase, start, end| event(0, wg, phase, 0, start, end);
        buf.put_slot(
            0,
            0,
            &[
                e(0, Phase::Clock, 10_000, 1_000),
                e(0, Phase::Load, 1_100, 1_300),
                e(0, Phase::Clock, 11_000, 3_000),
            ],
        );
        buf.put_slot(
            0,
            1,
            &[
                e(1, Phase::Clock, 10_000, 1_400),
                e(1, Phase::WaitFull, 1_200, 1_300),
                e(1, Phase::Clock, 11_000, 3_000),
            ],
        );
        let t = Timeline::from_buffer(&buf).unwrap();
        assert_eq!(t.ns_per_cycle, 0.5);
        let (load, wait) = (&t.lanes[0].spans[0], &t.lanes[1].spans[0]);
        // Both end at cycle 1300, so at the same moment.
        assert_eq!(load.end_ns, wait.end_ns);
        assert_eq!(wait.end_ns - load.start_ns, 100.0);
        // The line passes 50 ns under the first pairs (the mean of 0, 0, -200 and 0).
        assert_eq!(t.lanes[0].clock.ns0, 9_950);
        assert_eq!((t.lanes[0].start_ns, t.lanes[1].start_ns), (0.0, 200.0));
    }

    #[test]
    fn a_lane_cut_short_takes_the_gpus_cycle_length() {
        let mut buf = TimelineBuffer::zeroed(2, 12);
        buf.put_slot(0, 0, &consumer(0, 0, 2, 10_000, 1_000, 0.5));
        buf.put_slot(1, 0, &consumer(1, 0, 5, 10_100, 5_000, 0.5));
        let t = Timeline::from_buffer(&buf).unwrap();
        let cut = &t.lanes[1];
        assert!(cut.truncated);
        assert_eq!((cut.clock_pairs, cut.sm_ghz), (1, None));
        assert_eq!(cut.clock.ns_per_cycle, 0.5);
        assert_eq!(cut.spans[0].start_ns, 100.0 + 25.0);
        assert_eq!(t.truncated().count(), 1);

        let mut alone = TimelineBuffer::zeroed(1, 6);
        alone.put_slot(0, 0, &consumer(0, 0, 5, 10_000, 1_000, 0.5));
        let err = Timeline::from_buffer(&alone).unwrap_err().to_string();
        assert!(
            err.contains("no SM's warpgroups recorded two clock pairs"),
            "{err}"
        );
    }

    #[test]
    fn a_warpgroup_that_loads_is_the_producer() {
        let mut buf = TimelineBuffer::zeroed(1, 32);
        let mut producer = vec![event(0, 0, Phase::Clock, 0, 1_000, 100)];
        for t in 0..3 {
            let c = 200 + 300 * u64::from(t);
            producer.push(event(0, 0, Phase::WaitEmpty, t, c, c + 100));
            producer.push(event(0, 0, Phase::Load, t, c + 100, c + 140));
        }
        producer.push(event(0, 0, Phase::Clock, 0, 1_600, 1_300));
        buf.put_slot(0, 0, &producer);
        buf.put_slot(0, 1, &consumer(0, 1, 3, 1_000, 100, 0.5));
        buf.put_slot(0, 2, &consumer(0, 2, 3, 1_000, 100, 0.5));
        let t = Timeline::from_buffer(&buf).unwrap();
        let names: Vec<String> = t.lanes.iter().map(Lane::name).collect();
        assert_eq!(names, ["producer", "consumer 1", "consumer 2"]);

        let stats = summarize(&t);
        let stat = |role, phase| {
            stats
                .iter()
                .find(|s| s.role == role && s.phase == phase)
                .unwrap_or_else(|| panic!("no {role:?} {phase:?}"))
        };
        let load = stat(Role::Producer, Phase::Load);
        assert_eq!((load.count, load.mean_ns), (3, 20.0));
        // The producer's lane: 1200 cycles at 0.5 ns; loads 3 x 20 ns of its 600 ns.
        assert!((load.share - 60.0 / 600.0).abs() < 1e-12, "{}", load.share);
        let qk = stat(Role::Consumer, Phase::Qk);
        assert_eq!((qk.count, qk.mean_ns), (6, 200.0));
        // A consumer: 50 + 3 * 1000 + 500 cycles; its QKᵀ 3 * 400 of them.
        assert!((qk.share - 1_200.0 / 3_550.0).abs() < 1e-12, "{}", qk.share);
        assert!(stats.iter().all(|s| s.phase != Phase::Clock));
        assert!(
            !stats
                .iter()
                .any(|s| s.role == Role::Producer && s.phase == Phase::Qk)
        );
    }

    #[test]
    fn every_phase_has_its_own_name_and_label() {
        use std::collections::BTreeSet;
        let names: BTreeSet<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
        let labels: BTreeSet<&str> = Phase::ALL.iter().map(|p| p.label()).collect();
        assert_eq!(names.len(), Phase::ALL.len());
        assert_eq!(labels.len(), Phase::ALL.len());
        assert_eq!(
            (Phase::BwdScores.name(), Phase::BwdScores.label()),
            ("bwd_scores", "Sᵀ/dPᵀ")
        );
        assert_eq!(Phase::DqReduce.name(), "dq_reduce");
        // The products run from issue to completion; each role's own phases are its alone.
        let gemms: Vec<Phase> = Phase::ALL.into_iter().filter(|p| p.is_gemm()).collect();
        assert_eq!(
            gemms,
            [Phase::Qk, Phase::Pv, Phase::BwdScores, Phase::BwdGrads]
        );
        for p in Phase::ALL {
            let roles = [p.is_producer(), p.is_writer(), p.is_backward_mma()];
            assert!(roles.iter().filter(|r| **r).count() <= 1, "{p:?}");
            assert!(!p.describe().is_empty());
        }
    }

    #[test]
    fn a_lanes_role_is_read_from_its_phases() {
        assert_eq!(Role::of([Phase::WaitEmpty, Phase::Load]), Role::Producer);
        assert_eq!(Role::of([Phase::Sync, Phase::DqReduce]), Role::Writer);
        assert_eq!(
            Role::of([Phase::WaitFull, Phase::BwdScores, Phase::Sync]),
            Role::Mma
        );
        assert_eq!(Role::of([Phase::WaitFull, Phase::Qk]), Role::Consumer);
        assert_eq!(Role::of([]), Role::Consumer);
    }

    #[test]
    fn the_backward_stride_grows_with_the_query_blocks_of_a_group() {
        let mut p = Problem::new(1, 4, 1024, 128);
        // 16 query blocks of 64 rows, one head a block: 10 x 16 + 16.
        assert_eq!(backward_stride_for(&p), 176);
        // Two query heads share each K/V head: a block walks both heads' query blocks.
        p.shape.kv_heads = 2;
        assert_eq!(backward_stride_for(&p), 10 * 32 + 16);
        p.shape.seqlen_q = 100;
        assert_eq!(backward_stride_for(&p), 10 * 4 + 16);
    }

    /// A backward block as stage 23 records it: the load warp in slot 0, the dQ writer warp
    /// in slot 1, the MMA warpgroups in slots 2 and 3, `steps` query blocks, 1 GHz.
    fn backward_block(block: u32, steps: u32) -> Vec<(u32, Vec<RawEvent>)> {
        let e = |wg: u8, phase: Phase, iteration: u32, start: u64, end: u64| {
            event(block, wg, phase, iteration, start, end)
        };
        let (ns0, c0) = (
            10_000 + 100 * u64::from(block),
            1_000 * u64::from(block + 1),
        );
        let step_cycles = 1_000;
        let last = c0 + 100 + step_cycles * u64::from(steps) + 400;
        let clocks = |wg: u8, events: &mut Vec<RawEvent>| {
            events.insert(0, e(wg, Phase::Clock, 0, ns0, c0));
            events.push(e(wg, Phase::Clock, 0, ns0 + (last - c0), last));
        };
        let mut load = Vec::new();
        let mut writer = Vec::new();
        for k in 0..steps {
            let c = c0 + 10 + step_cycles * u64::from(k);
            load.push(e(0, Phase::WaitEmpty, k, c, c + 20));
            load.push(e(0, Phase::Load, k, c + 20, c + 60));
            writer.push(e(1, Phase::Sync, k, c + 100, c + 1_000));
            writer.push(e(1, Phase::DqReduce, k, c + 1_000, c + 1_050));
        }
        clocks(0, &mut load);
        clocks(1, &mut writer);
        let mut slots = vec![(0, load), (1, writer)];
        for wg in 2..4u8 {
            let mut mma = Vec::new();
            for k in 0..steps {
                let c = c0 + 100 + step_cycles * u64::from(k);
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
            let c = c0 + 100 + step_cycles * u64::from(steps);
            mma.push(e(wg, Phase::Epilogue, steps, c, c + 300));
            clocks(wg, &mut mma);
            slots.push((u32::from(wg), mma));
        }
        slots
    }

    #[test]
    fn a_backward_block_has_a_load_warp_a_writer_and_two_mma_warpgroups() {
        let p = Problem::new(1, 2, 256, 128);
        let mut buf = TimelineBuffer::zeroed(1, backward_stride_for(&p));
        for (slot, events) in backward_block(0, 4) {
            buf.put_slot(0, slot, &events);
        }
        let t = Timeline::from_buffer(&buf).unwrap();
        let names: Vec<String> = t.lanes.iter().map(Lane::name).collect();
        assert_eq!(names, ["producer", "dQ writer", "MMA 0", "MMA 1"]);
        let roles: Vec<Role> = t.lanes.iter().map(|l| l.role).collect();
        assert_eq!(roles, [Role::Producer, Role::Writer, Role::Mma, Role::Mma]);
        assert!(t.truncated().next().is_none());

        let stats = summarize(&t);
        let listed: Vec<(Role, Phase)> = stats.iter().map(|s| (s.role, s.phase)).collect();
        assert_eq!(
            listed,
            [
                (Role::Producer, Phase::WaitEmpty),
                (Role::Producer, Phase::Load),
                (Role::Writer, Phase::Sync),
                (Role::Writer, Phase::DqReduce),
                (Role::Mma, Phase::WaitFull),
                (Role::Mma, Phase::Sync),
                (Role::Mma, Phase::Epilogue),
                (Role::Mma, Phase::BwdScores),
                (Role::Mma, Phase::BwdP),
                (Role::Mma, Phase::BwdDs),
                (Role::Mma, Phase::BwdGrads),
                (Role::Mma, Phase::DqStore),
            ]
        );
        let sync = stats
            .iter()
            .find(|s| s.role == Role::Mma && s.phase == Phase::Sync)
            .unwrap();
        // Two waits a step, 40 and 50 ns, in each of the two warpgroups.
        assert_eq!((sync.count, sync.mean_ns), (2 * 2 * 4, 45.0));
        let scores = stats.iter().find(|s| s.phase == Phase::BwdScores).unwrap();
        // 4 x 380 ns of each MMA lane's 4500 (100 before the steps, 4 x 1000, 400 after).
        assert_eq!(scores.count, 8);
        assert!(
            (scores.share - 4.0 * 380.0 / 4_500.0).abs() < 1e-12,
            "{}",
            scores.share
        );
    }

    #[test]
    fn a_request_of_no_blocks_is_refused() {
        let info = info(23, "hopper-backward", true);
        let p = Problem::new(1, 2, 256, 128);
        assert!(check_request(&info, &p, &TimelineRequest { blocks: 1 }).is_ok());
        let err = check_request(&info, &p, &TimelineRequest { blocks: 0 })
            .unwrap_err()
            .to_string();
        assert!(err.contains("at least one block"), "{err}");
    }

    static KERNELS: KernelBundle = KernelBundle {
        crate_name: "none",
        fatbin: &[],
        ptxas_report: "",
        status: "",
        sass_counts: "",
        loaded: std::sync::Mutex::new(Vec::new()),
    };

    fn info(number: u32, slug: &'static str, timeline: bool) -> StageInfo {
        StageInfo {
            number,
            builds_on: None,
            slug,
            idea: "",
            gpu: GpuArch::Sm90a,
            tensor_cores: TensorCores::Hgmma,
            timeline,
            head_dims: &[64, 128, 256],
            dtypes: &[DType::Bf16, DType::F16],
            kernels: &KERNELS,
        }
    }

    #[test]
    fn a_run_without_timeline_kernels_names_the_stages_with_them() {
        let stages = [
            info(10, "tma", false),
            info(11, "wgmma", true),
            info(12, "ws", true),
        ];
        let p = Problem::new(1, 2, 256, 128);
        let err = check(&stages[0], &p, &stages).unwrap_err();
        assert_eq!(
            err.to_string(),
            "stage 10 (tma) has no timeline kernels; stages with one: 11, 12"
        );
        // Without the list (a run that asks for a timeline): the first half alone.
        let err = check(&stages[0], &p, []).unwrap_err();
        assert_eq!(err.to_string(), "stage 10 (tma) has no timeline kernels");
        assert!(check(&stages[1], &p, &stages).is_ok());
        let f16 = Problem {
            dtype: DType::F16,
            ..p
        };
        let err = check(&stages[1], &f16, &stages).unwrap_err().to_string();
        assert_eq!(
            err,
            "stage 11 (wgmma) does not support dtype f16 in its timeline kernels; it supports bf16 there (run it with --dtype bf16)"
        );
        let d256 = Problem::new(1, 2, 256, 256);
        let err = check(&stages[1], &d256, &stages).unwrap_err().to_string();
        assert!(
            err.contains("head dim 256 in its timeline kernels; it supports head dims [64, 128]"),
            "{err}"
        );
        // The stage's own refusal comes first.
        let d96 = Problem::new(1, 2, 256, 96);
        let err = check(&stages[1], &d96, &stages).unwrap_err().to_string();
        assert!(
            err.contains("head dim 96; it supports head dims [64, 128, 256]"),
            "{err}"
        );
    }
}
