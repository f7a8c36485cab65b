// timeline.cuh: a measured picture of who waits for whom. A stage's timeline kernels (the
// same source built with TIMELINE = true, exported as `<prefix>_timeline_<dtype>_d<D>`)
// have one lane of each warpgroup (or of a role that is one warp: the backward's load and
// dQ writer warps) record when each phase of each iteration starts and ends; `flashlab
// timeline N` draws them. The timed kernels are built with TIMELINE = false,
// where every call below is an empty inline function: they contain no instrumentation at
// all. Book: "Stage 11: wgmma", section "A measured timeline".
#pragma once
#include <stdint.h>

#include "common.cuh"

namespace flashlab {

// ANCHOR: phases
// What a warpgroup is doing. harness/src/timeline.rs mirrors the numbers.
enum class Phase : uint8_t {
    Clock = 0,      // not a phase: start = %globaltimer (ns), end = clock64 at the same moment
    WaitEmpty = 1,  // producer: waiting for the consumers to release a ring slot
    Load = 2,       // producer: issuing a tile's TMA copies
    WaitFull = 3,   // consumer: waiting for a tile's copies to land
    Qk = 4,         // consumer: S = Q K^T, from issue until its wgmmas completed
    Softmax = 5,    // consumer: mask, row max, rescale, P = exp2(S - max)
    Pv = 6,         // consumer: O += P V, from issue until its wgmmas completed
    Sync = 7,       // waiting at a barrier for the other warpgroups (block or named)
    Epilogue = 8,   // consumer: O normalized, stored (the backward's MMA warpgroups: dK, dV stored)
    // The backward (stage 23): its MMA warpgroups' products and elementwise work, its dQ writer.
    BwdScores = 9,  // MMA: S^T = K Q^T and dP^T = V dO^T, from issue until both completed
    BwdP = 10,      // MMA: P^T recomputed from S^T and the LSE, masked (and packed, at 64 query rows a step)
    BwdDs = 11,     // MMA: dS^T = P^T o (dP^T - D), packed and stored for dQ (at 128 query rows, P^T packed and dV issued between)
    BwdGrads = 12,  // MMA: dV += P^T dO, dK += dS^T Q, dQ = dS K, from dV's issue until all completed
    DqStore = 13,   // MMA: its half of dQ's tile written to shared memory for the writer
    DqReduce = 14,  // writer: the bulk reduce-add of dQ's tile, until it was read (deterministic: its turn first)
};
// ANCHOR_END: phases
// Phase::Sync: a span that ends at a named barrier's bar.sync may end before the wait does:
// the clock read after it can issue before the barrier holds the warp (SASS
// BAR.SYNC.DEFER_BLOCKING lets the next instructions go), and stage 23's recordings show
// such spans of 2 cycles whatever the wait, which falls after them (tests/timeline.rs:
// assert_backward).

// One record: 32 bytes. Times are clock64 cycles of the block's SM, except Phase::Clock's.
struct TimelineEvent {
    uint64_t start, end;
    uint32_t block;      // blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)
    uint32_t iteration;  // the K/V tile, or 0
    uint16_t sm;         // %smid
    uint8_t warpgroup, phase;
    uint32_t reserved;
};
static_assert(sizeof(TimelineEvent) == 32, "harness/src/timeline.rs reads 32-byte events");

// Warpgroup slots per block in the buffer: the buffer holds, for each recorded block and
// each of these slots, `timeline_stride` events.
constexpr int TIMELINE_WARPGROUPS = 4;

__device__ __forceinline__ uint64_t read_globaltimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ uint32_t read_smid() {
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

// ANCHOR: recorder
// One per thread; only lane 0 of warp 0 of its warpgroup writes, and only in blocks the
// host asked for. `now()` before a phase, `record(phase, iteration, start)` after it. A
// role that is one warp, not a warpgroup (the backward's load and dQ writer warps), passes
// `lanes = 32`: its lane 0 writes, into slot `wg` of its own.
template <bool ON>
struct Timeline {
    TimelineEvent* events = nullptr;  // this warpgroup's slot, or null: not recording
    int count = 0, capacity = 0;
    uint32_t block = 0;
    uint16_t sm = 0;
    uint8_t warpgroup = 0;

    __device__ Timeline(const AttnParams& p, int wg, int lanes = 128) {
        if constexpr (ON) {
            block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
            warpgroup = wg;
            const bool writer = threadIdx.x % lanes == 0;
            if (p.timeline != nullptr && writer && block < uint32_t(p.timeline_blocks) && wg < TIMELINE_WARPGROUPS) {
                events = static_cast<TimelineEvent*>(p.timeline) + (size_t(block) * TIMELINE_WARPGROUPS + wg) * p.timeline_stride;
                capacity = p.timeline_stride;
                sm = read_smid();
                clock();
            }
        }
    }
    __device__ __forceinline__ uint64_t now() const {
        if constexpr (ON) return clock64();
        return 0;
    }
    __device__ __forceinline__ void put(Phase phase, uint32_t iteration, uint64_t start, uint64_t end) {
        if constexpr (ON) {
            if (events != nullptr && count < capacity)
                events[count] = TimelineEvent{start, end, block, iteration, sm, warpgroup, uint8_t(phase), 0};
            ++count;  // past capacity the event is dropped: the host finds the slot full and says it was cut
        }
    }
    __device__ __forceinline__ void record(Phase phase, uint32_t iteration, uint64_t start) {
        if constexpr (ON) put(phase, iteration, start, now());
    }
    // Pairs the SM's cycle counter with the GPU-wide nanosecond clock, at a warpgroup's start
    // and end: the host converts cycles to ns with them and lines up blocks on different SMs.
    __device__ __forceinline__ void clock() {
        if constexpr (ON) {
            const uint64_t ns = read_globaltimer();
            put(Phase::Clock, 0, ns, clock64());
        }
    }
};
// ANCHOR_END: recorder

// ANCHOR: phase_macro
// A phase in one line: `FL_PHASE(tl, Phase::Qk, t, mma.qk_issue(k); mma.wait_s<0>());` runs
// the statements and records them as phase Qk of iteration t. In a timed build (tl is a
// Timeline<false>) it is the statements alone.
#define FL_PHASE(tl, phase, iteration, ...)               \
    do {                                                  \
        const uint64_t fl_phase_start_ = (tl).now();     \
        __VA_ARGS__;                                      \
        (tl).record(phase, iteration, fl_phase_start_);   \
    } while (0)
// ANCHOR_END: phase_macro

}  // namespace flashlab

// The timeline variants of a TMA stage whose kernel is `body<T, D, bool TIMELINE>`: bf16,
// both head dims, exported as `<prefix>_timeline_bf16_d<D>`. `blocks` is the blocks an SM
// the timeline build must keep: the timed kernel's, where its registers allow more than
// one (stage 11), so that the picture is of the kernel that was timed. `_WITH` takes the
// kernel's parameters and tensor maps (the backward's: hopper/backward_tiles.cuh).
#define FLASHLAB_EXPORT_TIMELINE_TMA_WITH(Params, Maps, prefix, body, D, threads, blocks)                                \
    extern "C" __global__ void __launch_bounds__(threads, blocks)                                                        \
        prefix##_timeline_bf16_d##D(const Params p, const __grid_constant__ Maps maps) {                                 \
        body<__nv_bfloat16, D, true>(p, maps);                                                                           \
    }
#define FLASHLAB_EXPORT_TIMELINE_TMA_1B(prefix, body, D, threads, blocks) \
    FLASHLAB_EXPORT_TIMELINE_TMA_WITH(flashlab::AttnParams, flashlab::AttnTensorMaps, prefix, body, D, threads, blocks)
#define FLASHLAB_EXPORT_TIMELINE_TMA_1(prefix, body, D, threads) FLASHLAB_EXPORT_TIMELINE_TMA_1B(prefix, body, D, threads, 1)
#define FLASHLAB_EXPORT_TIMELINE_TMA_BLOCKS(prefix, body, threads, blocks) \
    FLASHLAB_EXPORT_TIMELINE_TMA_1B(prefix, body, 64, threads, blocks)     \
    FLASHLAB_EXPORT_TIMELINE_TMA_1B(prefix, body, 128, threads, blocks)
#define FLASHLAB_EXPORT_TIMELINE_TMA(prefix, body, threads)   \
    FLASHLAB_EXPORT_TIMELINE_TMA_1(prefix, body, 64, threads) \
    FLASHLAB_EXPORT_TIMELINE_TMA_1(prefix, body, 128, threads)
// The same with `threads<D>` threads for head dim D (FLASHLAB_EXPORT_ALL_TMA_PER_D).
#define FLASHLAB_EXPORT_TIMELINE_TMA_PER_D(prefix, body, threads)   \
    FLASHLAB_EXPORT_TIMELINE_TMA_1(prefix, body, 64, threads<64>) \
    FLASHLAB_EXPORT_TIMELINE_TMA_1(prefix, body, 128, threads<128>)
#define FLASHLAB_EXPORT_TIMELINE_TMA_PER_D_256(prefix, body, threads) \
    FLASHLAB_EXPORT_TIMELINE_TMA_PER_D(prefix, body, threads)         \
    FLASHLAB_EXPORT_TIMELINE_TMA_1(prefix, body, 256, threads<256>)
