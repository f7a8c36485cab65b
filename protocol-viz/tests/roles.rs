//! The models of stages 12, 13 and 16 (`pipeline.rs`, `pingpong.rs`) copy the kernels'
//! arithmetic and order: hold the copies to the kernels' sources, so that a change to a
//! kernel that the models (and the book's figures drawn from them) do not follow fails here.
//! The constants they share (the named barriers, a turn's count) are not copied: the models
//! read them from the host build of `hopper/turns.cuh` (`protocol_viz::kernel_fns`).

use std::path::PathBuf;

use protocol_viz::{pingpong, pipeline};

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

/// A shared header's code lines, as [`code`] gives them.
fn header(path: &str) -> Vec<String> {
    let include =
        flashlab_kernel_headers::include_dir_for(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    code(&format!("{}/{path}", include.display()))
}

/// The index of the first line at or after `from` that contains `needle`.
fn find(lines: &[String], from: usize, needle: &str) -> usize {
    lines[from..]
        .iter()
        .position(|l| l.contains(needle))
        .map(|i| i + from)
        .unwrap_or_else(|| panic!("no line with `{needle}` after line {from}"))
}

/// Shared headers, under the checkout's `kernel-headers/include`.
const PIPELINE: &str = "flashlab/hopper/pipeline.cuh";
const PRODUCER: &str = "flashlab/hopper/producer.cuh";
const TURNS: &str = "flashlab/hopper/turns.cuh";
const STAGE12: &str = "stages/12-warp-specialized/kernels/warp_specialized.cu";
const STAGE13: &str = "stages/13-ping-pong/kernels/ping_pong.cu";
const STAGE16: &str = "stages/16-overlap/kernels/overlap.cu";

#[test]
fn the_ring_model_waits_with_the_kernels_parities_and_counts() {
    // The ring's state: the slot and the parity of its use, which flips at each wrap.
    let pipe = header(PIPELINE);
    let advance = find(&pipe, 0, "__device__ __forceinline__ void advance() {");
    find(&pipe, advance, "if (++index == SLOTS) {");
    find(&pipe, advance, "phase ^= 1;");
    // Full counts the producer's one arrival, empty one per consumer warp; the producer
    // waits on empty with the opposite parity of the use it fills (a fresh barrier lets
    // the first use through), a consumer on full with the use's parity, one lane a warp
    // releases.
    find(&pipe, 0, "mbarrier_init(&full[i], 1);");
    find(&pipe, 0, "mbarrier_init(&empty[i], consumer_warps);");
    find(&pipe, 0, "mbarrier_wait(&empty[st.index], st.phase ^ 1);");
    find(&pipe, 0, "mbarrier_wait(&full[st.index], st.phase);");
    find(
        &pipe,
        0,
        "if (threadIdx.x % 32 == 0) mbarrier_arrive(&empty[st.index]);",
    );
    for u in 0..8 {
        let phase = u % 2;
        assert_eq!(pipeline::full_parity(u), phase);
        assert_eq!(pipeline::empty_parity_fresh_barrier(u), Some(phase ^ 1));
        // The model's producer skips the wait on a slot's first use instead: the same
        // protocol, since a fresh barrier's wait for parity 1 passes at once.
        if u > 0 {
            assert_eq!(pipeline::empty_parity(u), Some(phase ^ 1));
        }
    }
    // The producer: K's slot acquired, then filled; then V's, as `pipeline::Model` orders it.
    let prod = header(PRODUCER);
    let loop_top = find(
        &prod,
        0,
        "for (int t = 0; t < w.n_tiles; ++t, st.advance()) {",
    );
    let k_empty = find(&prod, loop_top, "s.bar->k.producer_acquire(st)");
    let k_issue = find(&prod, k_empty, "s.bar->k.producer_expect(st, TILE_BYTES)");
    let v_empty = find(&prod, k_issue, "s.bar->v.producer_acquire(st)");
    find(&prod, v_empty, "s.bar->v.producer_expect(st, TILE_BYTES)");
    // Stage 12's consumer: wait for K's tile, S, release K; then V the same way.
    let k = code(STAGE12);
    find(&k, 0, "barriers.init(CONSUMERS<D> * 4);");
    let loop_top = find(&k, 0, "for (int t = 0; t < w.n_tiles; ++t, st.advance()) {");
    let wait_k = find(&k, loop_top, "s.bar->k.consumer_wait(st)");
    let qk = find(&k, wait_k, "mma.qk_issue(s.k_slot(st));");
    let rel_k = find(&k, qk, "s.bar->k.consumer_release(st)");
    let wait_v = find(&k, rel_k, "s.bar->v.consumer_wait(st)");
    let pv = find(&k, wait_v, "mma.pv_issue(s.v_slot(st));");
    find(&k, pv, "s.bar->v.consumer_release(st)");
    // Stage 16's consumer waits for K's tile t and V's tile t - 1 through the same state.
    let k = code(STAGE16);
    find(
        &k,
        0,
        "s.bar->k.consumer_wait(st); s.bar->v.consumer_wait(prev)",
    );
}

#[test]
fn the_ping_pong_model_takes_and_passes_turns_as_the_kernel_does() {
    // The barrier ids and counts are not copied: the model reads them from the host build
    // of the header the kernels include (`pingpong::mma_turn` and the others), and the
    // kernels declare none of their own.
    for path in [STAGE13, STAGE16] {
        let k = code(path);
        find(&k, 0, &format!("#include <{TURNS}>"));
        for own in ["enum NamedBarrier", "TURN_THREADS ="] {
            assert!(!k.iter().any(|l| l.contains(own)), "{path}: {own}");
        }
        find(
            &k,
            0,
            "auto take_turn = [&]() { named_barrier_sync(MMA_TURN + wg, TURN_THREADS); };",
        );
        find(
            &k,
            0,
            // With two consumers (d = 128, the model's case) the next one is 1 - wg.
            "auto pass_turn = [&]() { named_barrier_arrive(MMA_TURN + (wg + 1) % CONSUMERS<D>, TURN_THREADS); };",
        );
    }
    // A turn's barrier counts two warpgroups: the one taking the turn and the one passing
    // it, as the model's two consumers arrive.
    assert_eq!(pingpong::turn_threads(), 2 * pingpong::warpgroup_threads());
    // Stage 16, the model's program: the free first turn, then the loop's order: turn,
    // S_t, P V_{t-1}, pass, wait for S (one group may stay in flight), softmax, wait for
    // P V, pack P; the last P V; and consumer 0's last sync.
    let k = code(STAGE16);
    let free = find(
        &k,
        0,
        "if (wg == 0) named_barrier_arrive(MMA_TURN, TURN_THREADS);",
    );
    let first = find(&k, free, "take_turn()");
    let s0 = find(&k, first, "mma.qk_issue(s.k_slot(st)); pass_turn();");
    let top = find(&k, s0, "for (int t = 1; t < w.n_tiles; ++t) {");
    let turn = find(&k, top, "take_turn()");
    let s = find(&k, turn, "mma.qk_issue(s.k_slot(st));");
    let pv = find(&k, s, "mma.pv_issue(s.v_slot(prev));");
    let pass = find(&k, pv, "pass_turn();");
    let wait1 = find(&k, pass, "mma.template wait_s<1>();");
    let softmax = find(&k, wait1, "softmax_of_s(t * BLOCK_KV)");
    let wait0 = find(&k, softmax, "mma.template wait_o<0>();");
    let pack = find(&k, wait0, "mma.p_from_s();");
    let last = find(&k, pack, "mma.pv_issue(s.v_slot(st));");
    let end = find(
        &k,
        last,
        "if (wg == 0) named_barrier_sync(MMA_TURN, TURN_THREADS);",
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
