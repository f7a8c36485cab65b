//! The models of stages 12 and 13 (`pipeline.rs`, `pingpong.rs`) copy the kernels'
//! arithmetic and order: hold the copies to the kernels' sources, so that a change to a
//! kernel that the models (and the book's figures drawn from them) do not follow fails here.

use std::path::PathBuf;

use layout_viz::{pingpong, pipeline};

/// A kernel's code lines, comments dropped and whitespace collapsed.
fn code(path: &str) -> Vec<String> {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .lines()
        .map(|l| {
            l.split("//")
                .next()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// The index of the first line at or after `from` that contains `needle`.
fn find(lines: &[String], from: usize, needle: &str) -> usize {
    lines[from..]
        .iter()
        .position(|l| l.contains(needle))
        .map(|i| i + from)
        .unwrap_or_else(|| panic!("no line with `{needle}` after line {from}"))
}

const STAGE12: &str = "stages/12-warp-specialized/kernels/warp_specialized.cu";
const STAGE13: &str = "stages/13-ping-pong/kernels/ping_pong.cu";

#[test]
fn the_ring_model_waits_with_the_kernels_parities_and_counts() {
    for path in [STAGE12, STAGE13] {
        let k = code(path);
        // The producer: no wait on a slot's first use, then the release before, parity
        // (use - 1) % 2, K before V, as `pipeline::Model` orders it.
        let slot = find(&k, 0, "const int slot = t % NSTAGES, use = t / NSTAGES;");
        let k_empty = find(
            &k,
            slot,
            "if (use > 0) mbarrier_wait(&s.k_empty[slot], (use - 1) % 2);",
        );
        let k_issue = find(&k, k_empty, "mbarrier_arrive_expect_tx(&s.k_full[slot]");
        let v_empty = find(
            &k,
            k_issue,
            "if (use > 0) mbarrier_wait(&s.v_empty[slot], (use - 1) % 2);",
        );
        find(&k, v_empty, "mbarrier_arrive_expect_tx(&s.v_full[slot]");
        // Barriers: full counts the producer's one arrival, empty one per consumer warp.
        find(&k, 0, "mbarrier_init(&k_full[i], 1);");
        find(&k, 0, "mbarrier_init(&k_empty[i], EMPTY_ARRIVALS<D>);");
        find(&k, 0, "constexpr int EMPTY_ARRIVALS = CONSUMERS<D> * 4;");
        find(&k, 0, "if (lane == 0) mbarrier_arrive(empty);");
    }
    for u in 0..8 {
        assert_eq!(pipeline::empty_parity(u), (u > 0).then(|| (u - 1) % 2));
        assert_eq!(pipeline::full_parity(u), u % 2);
    }
    // Stage 12's consumer: wait for K's tile of this use, parity use % 2, S, release K;
    // then V the same way.
    let k = code(STAGE12);
    let loop_top = find(
        &k,
        find(&k, 0, "mbarrier_wait(s.q_full, 0);"),
        "const int slot = t % NSTAGES, use = t / NSTAGES;",
    );
    let wait_k = find(&k, loop_top, "mbarrier_wait(&s.k_full[slot], use % 2);");
    let qk = find(&k, wait_k, "qk(s.k_slot(t));");
    let rel_k = find(&k, qk, "release(&s.k_empty[slot]);");
    let wait_v = find(&k, rel_k, "mbarrier_wait(&s.v_full[slot], use % 2);");
    let pv = find(&k, wait_v, "pv(s.v_slot(t));");
    find(&k, pv, "release(&s.v_empty[slot]);");
    // Stage 13's consumer waits for K's tile t and V's tile t - 1 with the same formula.
    let k = code(STAGE13);
    find(&k, 0, "mbarrier_wait(&s.k_full[slot], (t / NSTAGES) % 2);");
    find(
        &k,
        0,
        "mbarrier_wait(&s.v_full[prev], ((t - 1) / NSTAGES) % 2);",
    );
}

#[test]
fn the_ping_pong_model_takes_and_passes_turns_as_the_kernel_does() {
    let k = code(STAGE13);
    find(
        &k,
        0,
        &format!("CONSUMERS_WROTE_O = {},", pingpong::CONSUMERS_WROTE_O),
    );
    find(&k, 0, &format!("MMA_TURN = {},", pingpong::MMA_TURN));
    find(&k, 0, "constexpr int TURN_THREADS = 2 * 128;");
    find(
        &k,
        0,
        "auto take_turn = [&]() { named_barrier_sync(MMA_TURN + cwg, TURN_THREADS); };",
    );
    find(
        &k,
        0,
        // With two consumers (d = 128, the model's case) the next one is 1 - cwg.
        "auto pass_turn = [&]() { named_barrier_arrive(MMA_TURN + (cwg + 1) % CONSUMERS<D>, TURN_THREADS); };",
    );
    assert_eq!(pingpong::TURN_THREADS, 2 * 128);
    // The free first turn, then the loop's order: turn, S_t, P V_{t-1}, pass, wait for S
    // (one group may stay in flight), softmax, wait for P V, pack P; the last P V; and
    // consumer 0's last sync.
    let free = find(
        &k,
        0,
        "if (cwg == 0) named_barrier_arrive(MMA_TURN, TURN_THREADS);",
    );
    let first = find(&k, free, "take_turn();");
    let s0 = find(&k, first, "qk_issue(s.k_slot(0));");
    find(&k, s0, "pass_turn();");
    let top = find(&k, s0, "for (int t = 1; t < w.n_tiles; ++t) {");
    let turn = find(&k, top, "take_turn();");
    let s = find(&k, turn, "qk_issue(s.k_slot(t));");
    let pv = find(&k, s, "pv_issue(s.v_slot(t - 1));");
    let pass = find(&k, pv, "pass_turn();");
    let wait1 = find(&k, pass, "wgmma_wait<1>();");
    let softmax = find(&k, wait1, "softmax(Int<1>{}, kv_start);");
    let wait0 = find(&k, softmax, "wgmma_wait<0>();");
    let pack = find(&k, wait0, "pack_p();");
    let last = find(&k, pack, "pv_issue(s.v_slot(last));");
    let end = find(
        &k,
        last,
        "if (cwg == 0) named_barrier_sync(MMA_TURN, TURN_THREADS);",
    );
    find(
        &k,
        end,
        "named_barrier_sync(CONSUMERS_WROTE_O, CONSUMERS<D> * 128);",
    );
    assert_eq!(
        pingpong::turn_program(0, 2, true),
        [
            pingpong::TurnStep::Arrive(2),
            pingpong::TurnStep::Sync(2),
            pingpong::TurnStep::Issue(0),
            pingpong::TurnStep::Arrive(3),
            pingpong::TurnStep::Sync(2),
            pingpong::TurnStep::Issue(1),
            pingpong::TurnStep::Arrive(3),
            pingpong::TurnStep::IssueLast,
            pingpong::TurnStep::Sync(2),
            pingpong::TurnStep::Sync(1),
        ]
    );
}
