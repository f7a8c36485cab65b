//! The timeline kernels on the GPU: every stage of the table with timeline kernels, on a
//! small problem, recorded, checked against the oracle like any run, and its events held
//! to what every stage design records (each consumer does QKᵀ, softmax and P·V once per
//! tile, in that order for each tile; a producer issues a tile before a consumer has it);
//! stage 11's serial loop to more; the backward's (stage 23) to its roles' order within a
//! step and between them. Hopper only: elsewhere each GPU test is reported ignored, with
//! the reason. `flashlab timeline N` draws the same events.

use flashlab::stages::STAGES;
use harness::backward::run::{BackwardOptions, BackwardRun};
use harness::run::{RunOptions, run_stage};
use harness::testing::{Checked, Needs, Skipped};
use harness::timeline::{Lane, Phase, Role, Timeline, TimelineRequest};
use harness::{BackwardStage, Problem, Stage, Workload};
use std::collections::BTreeSet;
use synthetic::{
    a_backward_recording_passes, a_dq_tile_out_of_step_fails, a_producer_and_two_consumers_pass,
    a_softmax_before_its_product_completed_fails, an_mma_step_out_of_order_fails,
    stage_11s_recording_passes,
};

harness::test_main!(
    Needs::Gpu => [timelines_bf16_d128, timelines_bf16_d64_causal],
    Needs::Cpu => [
        stage_11s_recording_passes,
        a_producer_and_two_consumers_pass,
        a_softmax_before_its_product_completed_fails,
        a_backward_recording_passes,
        a_dq_tile_out_of_step_fails,
        an_mma_step_out_of_order_fails,
    ],
);

/// Blocks 0 to 2: query tiles 0 to 2 of head 0 in every stage's grid.
const BLOCKS: u32 = 3;

/// The stage's timeline run on `problem`, checked against the oracle; `Err` where this
/// GPU cannot run the stage (the one reason allowed for checking nothing).
fn record(stage: &dyn Stage, problem: &Problem) -> Result<Timeline, Skipped> {
    let info = stage.info();
    let gpu = harness::testing::gpu_for(info)?;
    let opts = RunOptions {
        seed: None,
        check: true,
        timing: None,
        adjust_inputs: None,
        timeline: Some(TimelineRequest { blocks: BLOCKS }),
        ..Default::default()
    };
    let (report, outputs) = run_stage(stage, &gpu, problem, &opts)
        .unwrap_or_else(|e| panic!("stage {} on {problem}: {e}", info.label()));
    let check = report.check.expect("checking was asked for");
    assert!(
        check.passed,
        "stage {} on {problem} (seed {}): the timeline kernel's output fails the check: {}",
        info.label(),
        report.seed,
        check.summary()
    );
    let buffer = outputs.timeline.expect("a timeline was asked for");
    Ok(Timeline::from_buffer(&buffer).unwrap_or_else(|e| panic!("stage {}: {e}", info.label())))
}

/// The backward stage's timeline run on `problem` (the forward before it, then its three
/// kernels, the main one recording), checked against the f64 backward; `Err` where this
/// GPU cannot run the stage.
fn record_backward(stage: &dyn BackwardStage, problem: &Problem) -> Result<Timeline, Skipped> {
    let info = stage.info();
    let gpu = harness::testing::gpu_for(info)?;
    let opts = BackwardOptions {
        seed: None,
        check: true,
        timing: None,
        deterministic: false,
        timeline: Some(TimelineRequest { blocks: BLOCKS }),
    };
    let (report, outputs) = BackwardRun::new(stage, problem)
        .and_then(|run| run.run(&gpu, &opts))
        .unwrap_or_else(|e| panic!("stage {} on {problem}: {e}", info.label()));
    let check = report.check.expect("checking was asked for");
    assert!(
        check.passed,
        "stage {} on {problem} (seed {}): the timeline kernel's gradients fail the check: {}",
        info.label(),
        report.seed,
        check.summary()
    );
    let buffer = outputs.timeline.expect("a timeline was asked for");
    Ok(Timeline::from_buffer(&buffer).unwrap_or_else(|e| panic!("stage {}: {e}", info.label())))
}

/// The iterations of one phase's spans, in the order recorded.
fn iterations(lane: &Lane, phase: Phase) -> Vec<u32> {
    lane.spans_of(phase).map(|s| s.iteration).collect()
}

/// The span of `phase` for tile `t` (there is exactly one: checked before).
fn span(lane: &Lane, phase: Phase, t: u32) -> &harness::timeline::Span {
    lane.spans_of(phase)
        .find(|s| s.iteration == t)
        .unwrap_or_else(|| panic!("no {phase:?} of tile {t}"))
}

/// What holds for every recording, forward or backward: blocks 0 to BLOCKS - 1, each on
/// one SM, every lane whole, with a plausible clock and its spans inside it.
fn assert_lanes_plausible(label: &str, problem: &Problem, t: &Timeline) {
    let blocks: BTreeSet<u32> = t.lanes.iter().map(|l| l.block).collect();
    assert_eq!(
        blocks,
        (0..BLOCKS).collect(),
        "stage {label} on {problem}: recorded blocks"
    );
    for block in 0..BLOCKS {
        let lanes: Vec<&Lane> = t.lanes.iter().filter(|l| l.block == block).collect();
        let at = |l: &Lane| format!("stage {label} on {problem}: block {block} {}", l.name());
        // A block's warpgroups share its SM, and so its cycle counter.
        let sms: BTreeSet<u16> = lanes.iter().map(|l| l.sm).collect();
        assert_eq!(sms.len(), 1, "stage {label}: block {block} on SMs {sms:?}");
        for l in &lanes {
            assert!(!l.truncated, "{}: its slot was full", at(l));
            // A pair at the start and one at the end; the clock they give is plausible.
            assert_eq!(l.clock_pairs, 2, "{}: clock pairs", at(l));
            let ghz = l.clock.ghz();
            assert!((0.5..=3.0).contains(&ghz), "{}: a {ghz} GHz clock", at(l));
            for s in &l.spans {
                assert!(
                    s.end_cycle >= s.start_cycle && s.start_cycle >= l.clock.cycle0,
                    "{}: {s:?} ends before it starts or starts before the warpgroup did",
                    at(l)
                );
                assert!(s.duration_ns() >= 0.0 && s.start_ns >= l.start_ns);
            }
        }
    }
}

/// What holds for every stage design of a forward: returns each block's tile count.
fn assert_every_design(label: &str, problem: &Problem, t: &Timeline) -> Vec<u32> {
    assert_lanes_plausible(label, problem, t);
    let mut tiles = Vec::new();
    for block in 0..BLOCKS {
        let lanes: Vec<&Lane> = t.lanes.iter().filter(|l| l.block == block).collect();
        let at = |l: &Lane| format!("stage {label} on {problem}: block {block} {}", l.name());
        let consumers: Vec<&Lane> = lanes
            .iter()
            .copied()
            .filter(|l| l.role == Role::Consumer)
            .collect();
        assert!(
            !consumers.is_empty(),
            "stage {label}: block {block} has no consumer"
        );
        let n = iterations(consumers[0], Phase::Qk).len() as u32;
        assert!(n >= 1, "{}: no QKᵀ", at(consumers[0]));
        for l in &consumers {
            let each_tile_once: Vec<u32> = (0..n).collect();
            for phase in [Phase::Qk, Phase::Softmax, Phase::Pv] {
                let mut seen = iterations(l, phase);
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    each_tile_once,
                    "{}: the tiles of its {phase:?}",
                    at(l)
                );
            }
            // The softmax of a tile reads its S, and P·V its P: in every design.
            for tile in 0..n {
                let (qk, softmax, pv) = (
                    span(l, Phase::Qk, tile),
                    span(l, Phase::Softmax, tile),
                    span(l, Phase::Pv, tile),
                );
                assert!(
                    qk.end_cycle <= softmax.start_cycle && softmax.end_cycle <= pv.start_cycle,
                    "{}: tile {tile}: QKᵀ {qk:?}, softmax {softmax:?}, P·V {pv:?} out of order",
                    at(l)
                );
            }
        }
        // A producer issues every tile, and before any consumer has finished waiting for it.
        for p in lanes.iter().filter(|l| l.role == Role::Producer) {
            let loads: BTreeSet<u32> = iterations(p, Phase::Load).into_iter().collect();
            if loads.is_empty() {
                continue;
            }
            assert_eq!(loads, (0..n).collect(), "{}: the tiles it loads", at(p));
            for c in &consumers {
                for wait in c.spans_of(Phase::WaitFull) {
                    let first_issue = p
                        .spans_of(Phase::Load)
                        .filter(|s| s.iteration == wait.iteration)
                        .map(|s| s.start_cycle)
                        .min()
                        .expect("every tile is loaded");
                    assert!(
                        wait.end_cycle >= first_issue,
                        "{}: tile {} landed before the producer issued it",
                        at(c),
                        wait.iteration
                    );
                }
            }
        }
        tiles.push(n);
    }
    tiles
}

/// The tiles of stages 11 and 17, whose loops are serial: (stage, BLOCK_Q, BLOCK_KV).
const SERIAL_STAGES: [(u32, u32, u32); 2] = [
    (
        11,
        stage11_wgmma::tiles::BLOCK_Q,
        stage11_wgmma::tiles::BLOCK_KV,
    ),
    (
        17,
        stage17_wide_tile::tiles::BLOCK_Q,
        stage17_wide_tile::tiles::BLOCK_KV,
    ),
];

/// The loop of stages 11 and 17 is serial: per tile a block barrier, the wait for the
/// tile, QKᵀ, softmax, P·V, one after the other in each of its two warpgroups, then the
/// epilogue. `tiles` is their tile shape, (BLOCK_Q, BLOCK_KV).
fn assert_serial(problem: &Problem, t: &Timeline, tiles: &[u32], (block_q, block_kv): (u32, u32)) {
    for block in 0..BLOCKS {
        // Query rows of block b (head 0): block_q b on; causal (seqlen_q = seqlen_k) sees
        // the keys up to its last row.
        let keys = if problem.causal {
            (block_q * (block + 1)).min(problem.shape.seqlen_k as u32)
        } else {
            problem.shape.seqlen_k as u32
        };
        assert_eq!(
            tiles[block as usize],
            keys.div_ceil(block_kv),
            "block {block}"
        );
        let lanes: Vec<&Lane> = t.lanes.iter().filter(|l| l.block == block).collect();
        let names: Vec<String> = lanes.iter().map(|l| l.name()).collect();
        assert_eq!(names, ["consumer 0", "consumer 1"], "block {block}");
        for l in lanes {
            let n = tiles[block as usize];
            let mut previous_end = 0;
            for tile in 0..n {
                for phase in [
                    Phase::Sync,
                    Phase::WaitFull,
                    Phase::Qk,
                    Phase::Softmax,
                    Phase::Pv,
                ] {
                    let s = span(l, phase, tile);
                    assert!(
                        s.start_cycle >= previous_end,
                        "block {block} {}: tile {tile}'s {phase:?} starts before the phase before it ended",
                        l.name()
                    );
                    previous_end = s.end_cycle;
                }
            }
            let epilogue: Vec<u32> = iterations(l, Phase::Epilogue);
            assert_eq!(epilogue, [n], "block {block} {}", l.name());
            assert!(span(l, Phase::Epilogue, n).start_cycle >= previous_end);
            assert_eq!(
                l.spans.len() as u32,
                5 * n + 1,
                "block {block} {}",
                l.name()
            );
        }
    }
}

/// The steps (query blocks) block `block` of the backward walks, with stage 23's tiles
/// (`BLOCK_M` query rows a step, 128 at head dim 64, 64 at 128): the grid is (key blocks,
/// K/V heads, batch), handed out longest first when causal
/// (hopper/backward_scheduler.cuh: `bwd_longest_first`), and a key block sees every query
/// block of each head of its group, or with the causal mask those from the one holding
/// the first row that sees its first key.
fn backward_steps(problem: &Problem, block: u32) -> u32 {
    use stage23_hopper_backward::tiles::{BLOCK_N, block_m};
    let s = &problem.shape;
    let block_m = block_m(s.head_dim);
    let key_blocks = (s.seqlen_k as u32).div_ceil(BLOCK_N);
    let n_block = if problem.causal {
        block / (s.kv_heads * s.batch) as u32
    } else {
        block % key_blocks
    };
    let m_end = (s.seqlen_q as u32).div_ceil(block_m);
    let m_first = if problem.causal {
        (n_block * BLOCK_N).saturating_sub((s.seqlen_k - s.seqlen_q) as u32) / block_m
    } else {
        0
    };
    (s.heads / s.kv_heads) as u32 * (m_end - m_first)
}

/// Stage 23's order within a step, by its query rows a step (hopper/backward_mainloop.cuh):
/// at 128 (head dim 64) dV += Pᵀ dO is issued once dSᵀ is computed, inside dSᵀ's phase
/// (PACK_P_LATE), and dK before the warpgroups meet, dQ's tile stored once all three are
/// complete; at 64 (head dim 128) dV is issued before dPᵀ completes, and dQ before dK
/// (DQ_FIRST), its tile stored while dK runs.
fn rows128(problem: &Problem) -> bool {
    stage23_hopper_backward::tiles::block_m(problem.shape.head_dim) == 128
}

/// Stage 23's recording: per block its load warp, dQ writer warp and two MMA warpgroups, each
/// recording every step once (the MMA warpgroups' two syncs twice), in the kernel's order
/// within a step (hopper_backward.cu: `mma`), and the roles in step with each other: a
/// step's tiles issued before they land, dQ's tile written before the writer adds it, and
/// added (read) before the MMA warpgroups write the next one.
fn assert_backward(label: &str, problem: &Problem, t: &Timeline) {
    assert_lanes_plausible(label, problem, t);
    let rows128 = rows128(problem);
    for block in 0..BLOCKS {
        let lanes: Vec<&Lane> = t.lanes.iter().filter(|l| l.block == block).collect();
        let names: Vec<String> = lanes.iter().map(|l| l.name()).collect();
        assert_eq!(
            names,
            ["producer", "dQ writer", "MMA 0", "MMA 1"],
            "stage {label} on {problem}: block {block}"
        );
        let at = |l: &Lane| format!("stage {label} on {problem}: block {block} {}", l.name());
        let n = backward_steps(problem, block);
        let each_step_once: Vec<u32> = (0..n).collect();
        let each_step_twice: Vec<u32> = (0..n).flat_map(|k| [k, k]).collect();
        let sorted = |l: &Lane, phase| {
            let mut seen = iterations(l, phase);
            seen.sort_unstable();
            seen
        };
        let (load, writer, mmas) = (lanes[0], lanes[1], &lanes[2..]);
        for phase in [Phase::WaitEmpty, Phase::Load] {
            assert_eq!(
                sorted(load, phase),
                each_step_once,
                "{}: {phase:?}",
                at(load)
            );
        }
        for phase in [Phase::Sync, Phase::DqReduce] {
            assert_eq!(
                sorted(writer, phase),
                each_step_once,
                "{}: {phase:?}",
                at(writer)
            );
        }
        for l in mmas {
            for phase in [
                Phase::WaitFull,
                Phase::BwdScores,
                Phase::BwdP,
                Phase::BwdDs,
                Phase::BwdGrads,
                Phase::DqStore,
            ] {
                assert_eq!(sorted(l, phase), each_step_once, "{}: {phase:?}", at(l));
            }
            assert_eq!(sorted(l, Phase::Sync), each_step_twice, "{}: Sync", at(l));
            assert_eq!(iterations(l, Phase::Epilogue), [n], "{}: Epilogue", at(l));
            let mut previous_end = 0;
            for k in 0..n {
                let syncs: Vec<_> = l
                    .spans_of(Phase::Sync)
                    .filter(|s| s.iteration == k)
                    .collect();
                let (wait, scores, p, grads, ds, store) = (
                    span(l, Phase::WaitFull, k),
                    span(l, Phase::BwdScores, k),
                    span(l, Phase::BwdP, k),
                    span(l, Phase::BwdGrads, k),
                    span(l, Phase::BwdDs, k),
                    span(l, Phase::DqStore, k),
                );
                // The kernel's order: Sᵀ and dPᵀ issued; Pᵀ once Sᵀ is in; dV issued;
                // dPᵀ complete; dSᵀ; dS written (sync); dQ and dK issued; dQ complete, its
                // tile free (sync) and stored; dK complete. At 128 query rows a step: dPᵀ
                // complete; dSᵀ, with dV issued in it; dK issued, dS written (sync); dQ
                // issued; all complete; dQ's tile free (sync); dQ stored.
                let mut order = vec![
                    ("wait full starts", wait.start_cycle),
                    ("wait full ends", wait.end_cycle),
                    ("Sᵀ/dPᵀ issued", scores.start_cycle),
                    ("Pᵀ starts", p.start_cycle),
                    ("Pᵀ ends", p.end_cycle),
                    ("dPᵀ complete", scores.end_cycle),
                    ("dSᵀ starts", ds.start_cycle),
                    ("dSᵀ ends", ds.end_cycle),
                    ("dSᵀ written", syncs[0].start_cycle),
                    ("both warpgroups' dSᵀ written", syncs[0].end_cycle),
                    ("dV, dK, dQ complete", grads.end_cycle),
                    ("waiting for dQ's tile", syncs[1].start_cycle),
                    ("dQ's tile free", syncs[1].end_cycle),
                    ("dQ store starts", store.start_cycle),
                    ("dQ store ends", store.end_cycle),
                ];
                let dv_issued = ("dV issued", grads.start_cycle);
                order.insert(if rows128 { 7 } else { 5 }, dv_issued);
                if !rows128 {
                    // dK, issued after dQ, completes after dQ's tile is stored.
                    let at = order
                        .iter()
                        .position(|(what, _)| *what == "dV, dK, dQ complete")
                        .unwrap();
                    let complete = order.remove(at);
                    order.push(complete);
                }
                for pair in order.windows(2) {
                    assert!(
                        pair[0].1 <= pair[1].1,
                        "{}: step {k}: {} ({}) after {} ({})",
                        at(l),
                        pair[0].0,
                        pair[0].1,
                        pair[1].0,
                        pair[1].1
                    );
                }
                assert!(
                    wait.start_cycle >= previous_end,
                    "{}: step {k} starts before the step before it ended",
                    at(l)
                );
                previous_end = store.end_cycle.max(grads.end_cycle);
                // A step's Q and dO land after the load warp began issuing them.
                assert!(
                    wait.end_cycle >= span(load, Phase::Load, k).start_cycle,
                    "{}: step {k}'s tiles landed before the load warp issued them",
                    at(l)
                );
                // The writer adds dQ's tile once both warpgroups began storing it, and the
                // warpgroups store the next once the writer's add has read this one: the add
                // of step k has read the tile (DqReduce's end, read after the bulk copy's
                // read completed) after this warpgroup began storing it (DqStore's start,
                // before its DQ_FULL arrival), and its stores of step k were done (DqStore's
                // end, read after the fence its arrival waits for, which waits for them)
                // after the add of step k - 1 had read the tile (DqReduce's end, before the
                // writer's DQ_EMPTY arrival). Neither is checked against a Sync span's end:
                // the clock read right after a `bar.sync` issues before the barrier holds
                // the warp (SASS BAR.SYNC.DEFER_BLOCKING lets the next instructions go), so
                // such a span ends a few cycles after it starts, whatever the wait. Call F6's
                // recordings of this kernel on an H100 (`flashlab timeline 23 --dim 128
                // --seqlen 8192`, causal and not) have every writer Sync 2 to 4 cycles long
                // and every MMA DQ_EMPTY Sync 2; the writer's Sync of step 0 ends some 14000
                // cycles before a warpgroup began storing dQ, and the check of the writer's
                // Sync end against DqStore's start failed at every step.
                let add = span(writer, Phase::DqReduce, k);
                assert!(
                    add.end_cycle >= store.start_cycle,
                    "{}: step {k}: the writer's add had read dQ's tile at cycle {}, before the warpgroup began storing it at cycle {} ({} cycles later)",
                    at(l),
                    add.end_cycle,
                    store.start_cycle,
                    store.start_cycle - add.end_cycle
                );
                if k > 0 {
                    let read = span(writer, Phase::DqReduce, k - 1).end_cycle;
                    assert!(
                        store.end_cycle >= read,
                        "{}: step {k}: dQ's tile was stored by cycle {}, before the writer's add of step {} had read it at cycle {} ({} cycles later)",
                        at(l),
                        store.end_cycle,
                        k - 1,
                        read,
                        read - store.end_cycle
                    );
                }
            }
            assert!(span(l, Phase::Epilogue, n).start_cycle >= previous_end);
        }
    }
}

/// Every timeline stage's recording on `problem`; `Err` naming the stages this GPU cannot
/// run, once every stage it can run has passed.
fn assert_timelines(problem: Problem) -> Checked {
    let stages: Vec<&dyn Stage> = STAGES
        .iter()
        .copied()
        .filter(|s| s.info().timeline)
        // The stages with timeline kernels at this head dim (the FP8 stages have 128 alone).
        .filter(|s| {
            harness::timeline::timeline_head_dims(s.info()).contains(&problem.shape.head_dim)
        })
        .collect();
    assert!(!stages.is_empty(), "no stage has timeline kernels");
    let mut skipped = Vec::new();
    for stage in stages {
        let info = stage.info();
        let recorded = match stage.workload() {
            Workload::Backward(backward) => record_backward(backward, &problem),
            _ => record(stage, &problem),
        };
        let t = match recorded {
            Ok(t) => t,
            Err(Skipped(reason)) => {
                skipped.push(reason);
                continue;
            }
        };
        let first_product = match stage.workload() {
            Workload::Backward(_) => {
                assert_backward(&info.label(), &problem, &t);
                Phase::BwdScores
            }
            _ => {
                let tiles = assert_every_design(&info.label(), &problem, &t);
                if let Some(&(_, q, kv)) = SERIAL_STAGES.iter().find(|s| s.0 == info.number) {
                    assert_serial(&problem, &t, &tiles, (q, kv));
                }
                Phase::Qk
            }
        };
        // The chart shows every span of the run.
        let chart = flashlab::timeline::chart(
            &t,
            info.label(),
            vec![],
            protocol_viz::timeline::Window::All,
        );
        let svg = protocol_viz::timeline::render(&chart);
        let products: usize = t
            .lanes
            .iter()
            .map(|l| l.spans_of(first_product).count())
            .sum();
        assert_eq!(
            svg.matches(&format!("class=\"span {}\"", first_product.name()))
                .count(),
            products
        );
    }
    match skipped.first() {
        None => Ok(()),
        Some(first) => Err(Skipped(format!(
            "{} timeline stage(s) not run here: {first}",
            skipped.len()
        ))),
    }
}

fn timelines_bf16_d128() -> Checked {
    assert_timelines(Problem::new(1, 2, 1024, 128))
}

fn timelines_bf16_d64_causal() -> Checked {
    let mut problem = Problem::new(1, 2, 1024, 64);
    problem.causal = true;
    assert_timelines(problem)
}

/// Buffers written as the kernels write them, for the checks above: stage 11's serial loop
/// (`wgmma.cu`), and a producer warpgroup 0 loading for consumers 1 and 2. The checks pass
/// on both and fail on a softmax that starts before its QKᵀ completed, so a failure on the
/// GPU is the kernel's, not the test's.
mod synthetic {
    use super::*;
    use harness::timeline::{RawEvent, TimelineBuffer};

    fn event(block: u32, wg: u8, phase: Phase, iteration: u32, start: u64, end: u64) -> RawEvent {
        RawEvent {
            start,
            end,
            block,
            iteration,
            sm: 2 * block as u16,
            warpgroup: wg,
            phase: phase as u8,
        }
    }

    /// One warpgroup: a clock pair, then `phases` (name, cycles) per tile, then the
    /// epilogue and the last clock pair; 1.5 GHz.
    fn serial(block: u32, wg: u8, tiles: u32, phases: &[(Phase, u64)]) -> Vec<RawEvent> {
        let (ns0, c0) = (
            1_000_000 + 300 * u64::from(block),
            50_000 * u64::from(block + 1),
        );
        let mut events = vec![event(block, wg, Phase::Clock, 0, ns0, c0)];
        let mut c = c0 + 30;
        for t in 0..tiles {
            for &(phase, cycles) in phases {
                events.push(event(block, wg, phase, t, c, c + cycles));
                c += cycles + 2;
            }
        }
        events.push(event(block, wg, Phase::Epilogue, tiles, c, c + 900));
        c += 900;
        events.push(event(block, wg, Phase::Clock, 0, ns0 + (c - c0) * 2 / 3, c));
        events
    }

    const STAGE11: [(Phase, u64); 5] = [
        (Phase::Sync, 40),
        (Phase::WaitFull, 60),
        (Phase::Qk, 500),
        (Phase::Softmax, 700),
        (Phase::Pv, 500),
    ];

    fn stage11(problem: &Problem, tiles: impl Fn(u32) -> u32) -> TimelineBuffer {
        let mut buf = TimelineBuffer::zeroed(BLOCKS, harness::timeline::stride_for(problem));
        for b in 0..BLOCKS {
            for wg in 0..2 {
                buf.put_slot(b, u32::from(wg), &serial(b, wg, tiles(b), &STAGE11));
            }
        }
        buf
    }

    pub fn stage_11s_recording_passes() {
        // Stage 11's 128 x 64 tile: 1024 keys are 16 tiles; causal, block b sees 128 (b + 1)
        // keys, 2 (b + 1) tiles.
        let shape = (
            stage11_wgmma::tiles::BLOCK_Q,
            stage11_wgmma::tiles::BLOCK_KV,
        );
        assert_eq!(shape, (128, 64));
        let problem = Problem::new(1, 2, 1024, 128);
        let t = Timeline::from_buffer(&stage11(&problem, |_| 16)).unwrap();
        let tiles = assert_every_design("11 (wgmma)", &problem, &t);
        assert_eq!(tiles, [16, 16, 16]);
        assert_serial(&problem, &t, &tiles, shape);

        let mut causal = Problem::new(1, 2, 1024, 64);
        causal.causal = true;
        let t = Timeline::from_buffer(&stage11(&causal, |b| 2 * (b + 1))).unwrap();
        let tiles = assert_every_design("11 (wgmma)", &causal, &t);
        assert_serial(&causal, &t, &tiles, shape);
        // The same recording read with stage 17's 128-key tile has too many tiles.
        let wide = (
            stage17_wide_tile::tiles::BLOCK_Q,
            stage17_wide_tile::tiles::BLOCK_KV,
        );
        assert!(
            harness::testing::expect_panic(|| assert_serial(&causal, &t, &tiles, wide)).is_ok()
        );
    }

    pub fn a_producer_and_two_consumers_pass() {
        let problem = Problem::new(1, 2, 1024, 128);
        let mut buf = TimelineBuffer::zeroed(BLOCKS, harness::timeline::stride_for(&problem));
        for b in 0..BLOCKS {
            // The producer runs ahead: each tile issued before the consumers wait for it.
            let producer = serial(b, 0, 8, &[(Phase::WaitEmpty, 10), (Phase::Load, 20)]);
            let producer: Vec<RawEvent> = producer
                .into_iter()
                .filter(|e| e.phase != Phase::Epilogue as u8)
                .collect();
            buf.put_slot(b, 0, &producer);
            let consumer = [
                (Phase::WaitFull, 60),
                (Phase::Qk, 500),
                (Phase::Softmax, 700),
                (Phase::Pv, 500),
                (Phase::Sync, 30),
            ];
            for wg in 1..3 {
                buf.put_slot(b, u32::from(wg), &serial(b, wg, 8, &consumer));
            }
        }
        let t = Timeline::from_buffer(&buf).unwrap();
        assert_eq!(assert_every_design("12 (ws)", &problem, &t), [8, 8, 8]);
    }

    /// Stage 23's block `block` as its kernel records it, `steps` steps of 1000 cycles at
    /// 1.5 GHz: the load warp (slot 0) issues each step's tiles before the MMA warpgroups
    /// (slots 2 and 3) wait for them, the writer (slot 1) adds dQ's tile after they stored
    /// it, and they store the next after its add. `rows128`: the order at 128 query rows a
    /// step, dV issued inside dSᵀ's phase and dQ's tile stored after dV, dK and dQ are
    /// complete; else dV issued before dPᵀ completed and dQ's tile stored while dK runs
    /// (`rows128` above). A Sync that ends at a `bar.sync` (the writer's, and the MMA
    /// warpgroups' second) lasts 2 cycles, as the kernel records it (`assert_backward`), the
    /// wait falling after it.
    fn backward_block(block: u32, steps: u32, rows128: bool) -> Vec<Vec<RawEvent>> {
        let (ns0, c0) = (
            1_000_000 + 300 * u64::from(block),
            50_000 * u64::from(block + 1),
        );
        let last = c0 + 100 + 1_000 * u64::from(steps) + 500;
        let with_clocks = |wg: u8, mut events: Vec<RawEvent>| {
            events.insert(0, event(block, wg, Phase::Clock, 0, ns0, c0));
            events.push(event(
                block,
                wg,
                Phase::Clock,
                0,
                ns0 + (last - c0) * 2 / 3,
                last,
            ));
            events
        };
        let at = |k: u32| c0 + 100 + 1_000 * u64::from(k);
        let mut load = Vec::new();
        let mut writer = Vec::new();
        for k in 0..steps {
            let b = at(k);
            load.push(event(block, 0, Phase::WaitEmpty, k, b - 90, b - 70));
            load.push(event(block, 0, Phase::Load, k, b - 70, b - 30));
            writer.push(event(block, 1, Phase::Sync, k, b - 10, b - 8));
            writer.push(event(block, 1, Phase::DqReduce, k, b + 995, b + 1_040));
        }
        let mut lanes = vec![with_clocks(0, load), with_clocks(1, writer)];
        // dV's issue; dV, dK and dQ complete; dQ's tile free (the second Sync); dQ stored.
        let (dv_issued, complete, free, stored) = if rows128 {
            (450, 850, 850, (900, 990))
        } else {
            (300, 995, 700, (750, 840))
        };
        for wg in 2..4u8 {
            let mut mma = Vec::new();
            for k in 0..steps {
                let b = at(k);
                for (phase, start, end) in [
                    (Phase::WaitFull, 0, 20),
                    (Phase::BwdP, 150, 300),
                    (Phase::BwdScores, 20, 400),
                    (Phase::BwdDs, 400, 550),
                    (Phase::Sync, 560, 600),
                    (Phase::BwdGrads, dv_issued, complete),
                    (Phase::Sync, free, free + 2),
                    (Phase::DqStore, stored.0, stored.1),
                ] {
                    mma.push(event(block, wg, phase, k, b + start, b + end));
                }
            }
            let b = at(steps);
            mma.push(event(block, wg, Phase::Epilogue, steps, b, b + 400));
            lanes.push(with_clocks(wg, mma));
        }
        lanes
    }

    fn backward_buffer(problem: &Problem, rows128: bool) -> TimelineBuffer {
        let stride = harness::timeline::backward_stride_for(problem);
        let mut buf = TimelineBuffer::zeroed(BLOCKS, stride);
        for b in 0..BLOCKS {
            for (slot, events) in backward_block(b, backward_steps(problem, b), rows128)
                .iter()
                .enumerate()
            {
                buf.put_slot(b, slot as u32, events);
            }
        }
        buf
    }

    pub fn a_backward_recording_passes() {
        let problem = Problem::new(1, 2, 1024, 128);
        assert_eq!(
            (0..BLOCKS)
                .map(|b| backward_steps(&problem, b))
                .collect::<Vec<_>>(),
            [16, 16, 16]
        );
        let t = Timeline::from_buffer(&backward_buffer(&problem, rows128(&problem))).unwrap();
        assert_backward("23 (hopper-backward)", &problem, &t);

        // Causal at head dim 64 (128 query rows a step): blocks 0 and 1 hold key block 0 of
        // heads 0 and 1 (longest first), block 2 key block 1, whose first 128 keys' query
        // rows, query block 0, it does not see.
        let mut causal = Problem::new(1, 2, 1024, 64);
        causal.causal = true;
        assert_eq!(
            (0..BLOCKS)
                .map(|b| backward_steps(&causal, b))
                .collect::<Vec<_>>(),
            [8, 8, 7]
        );
        let t = Timeline::from_buffer(&backward_buffer(&causal, rows128(&causal))).unwrap();
        assert_backward("23 (hopper-backward)", &causal, &t);
        // Read as the unmasked problem at head dim 128 (64 rows a step), its blocks have too
        // few steps; read with dV issued before dPᵀ completed, its steps are out of order.
        assert!(harness::testing::expect_panic(|| assert_backward("23", &problem, &t)).is_ok());
        let t = Timeline::from_buffer(&backward_buffer(&causal, false)).unwrap();
        let failure = harness::testing::expect_panic(|| assert_backward("23", &causal, &t))
            .expect("dV issued before dPᵀ completed is not the order at 128 query rows");
        let message = failure.downcast_ref::<String>().unwrap();
        assert!(message.contains("step 0: dSᵀ starts"), "{message}");
    }

    pub fn a_dq_tile_out_of_step_fails() {
        let problem = Problem::new(1, 2, 1024, 128);
        // Block 1's writer: its add of step 3 moved to `start`..`end` cycles after the step.
        let moved = |start: u64, end: u64| {
            let mut buf = backward_buffer(&problem, false);
            let mut events = backward_block(1, 16, false).swap_remove(1);
            let add = events
                .iter()
                .position(|e| e.phase == Phase::DqReduce as u8 && e.iteration == 3)
                .unwrap();
            let step = events[add].start - 995;
            (events[add].start, events[add].end) = (step + start, step + end);
            buf.put_slot(1, 1, &events);
            let t = Timeline::from_buffer(&buf).unwrap();
            let failure = harness::testing::expect_panic(|| assert_backward("23", &problem, &t))
                .expect("the checks must fail");
            failure.downcast_ref::<String>().unwrap().clone()
        };
        // Done reading dQ's tile before the warpgroups began storing it (at 750, head dim
        // 128's order).
        let message = moved(720, 730);
        assert!(
            message.contains("block 1 MMA 0: step 3: the writer's add had read dQ's tile at cycle"),
            "{message}"
        );
        // Still reading it when they had stored the next (step 4's stores end at 1840).
        let message = moved(995, 1_845);
        assert!(
            message.contains("block 1 MMA 0: step 4: dQ's tile was stored by cycle"),
            "{message}"
        );
    }

    pub fn an_mma_step_out_of_order_fails() {
        let problem = Problem::new(1, 2, 1024, 128);
        let mut buf = backward_buffer(&problem, false);
        // Block 1's MMA 1 forms dSᵀ of step 3 before its dPᵀ completed.
        let mut events = backward_block(1, 16, false).swap_remove(3);
        let ds = events
            .iter()
            .position(|e| e.phase == Phase::BwdDs as u8 && e.iteration == 3)
            .unwrap();
        events[ds].start -= 100;
        buf.put_slot(1, 3, &events);
        let t = Timeline::from_buffer(&buf).unwrap();
        let failure = harness::testing::expect_panic(|| assert_backward("23", &problem, &t))
            .expect("the checks must fail");
        let message = failure.downcast_ref::<String>().unwrap();
        assert!(
            message.contains("block 1 MMA 1: step 3: dPᵀ complete"),
            "{message}"
        );
    }

    pub fn a_softmax_before_its_product_completed_fails() {
        let problem = Problem::new(1, 2, 1024, 128);
        let mut buf = stage11(&problem, |_| 8);
        let mut events = serial(1, 1, 8, &STAGE11);
        let qk = events
            .iter()
            .position(|e| e.phase == Phase::Qk as u8 && e.iteration == 3)
            .unwrap();
        events[qk].end = events[qk + 1].start + 10;
        buf.put_slot(1, 1, &events);
        let t = Timeline::from_buffer(&buf).unwrap();
        let failure = harness::testing::expect_panic(|| assert_every_design("11", &problem, &t))
            .expect("the checks must fail");
        let message = failure.downcast_ref::<String>().unwrap();
        assert!(
            message.contains("block 1 consumer 1: tile 3: QKᵀ"),
            "{message}"
        );
    }
}
