// hopper/turns.cuh: the named barriers of the consumer warpgroups that take turns at the
// tensor cores (stage 13 on; named_barrier.cuh issues them), and how many threads a turn
// counts. Constants alone, so the host compiles this header too: protocol-viz's ping-pong
// model takes its barrier ids and counts from that build, not from a copy.
// Book: "Stage 13: ping-pong", section "Ping-pong".
#pragma once

namespace flashlab {

// Named barriers; 0 is __syncthreads.
// ANCHOR: barriers
enum NamedBarrier : int {
    CONSUMERS_WROTE_O = 1,  // every consumer warpgroup has put O in shared memory
    MMA_TURN = 2,           // MMA_TURN + c: consumer c may issue its wgmmas
};
// A turn's barrier completes when 2 x 128 threads have arrived: the warpgroup taking the
// turn (bar.sync) and the one handing it over (bar.arrive).
constexpr int WARPGROUP_THREADS = 128;
constexpr int TURN_THREADS = 2 * WARPGROUP_THREADS;
// ANCHOR_END: barriers

}  // namespace flashlab
