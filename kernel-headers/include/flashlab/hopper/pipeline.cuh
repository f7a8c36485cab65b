// hopper/pipeline.cuh: a ring of shared-memory slots between a producer and its consumers,
// as two mbarriers a slot, and the slot-and-phase state each side walks it with (CUTLASS
// calls it PipelineState). The producer waits until a slot is empty, fills it by TMA and
// lets the bytes complete the slot's "full" barrier; a consumer waits for full, reads, and
// arrives on "empty". Book: "Stage 12: warp specialization", section "Full and empty".
#pragma once
#include <stdint.h>

#include "../mbarrier.cuh"

namespace flashlab {

// ANCHOR: pipeline_state
// Where a walk through the ring stands: the slot of the next tile and the parity of that
// slot's current use. Tile t sits in slot t % SLOTS and is the slot's (t / SLOTS)-th use,
// whose barrier phases have parity (t / SLOTS) % 2: the parity flips each time the walk
// wraps around, so no use computes `(t / SLOTS) % 2` by hand.
template <int SLOTS>
struct PipelineState {
    int index;
    uint32_t phase;
    __device__ __forceinline__ void advance() {
        if (++index == SLOTS) {
            index = 0;
            phase ^= 1;
        }
    }
};
template <int SLOTS>
__device__ __forceinline__ PipelineState<SLOTS> pipeline_start() {
    return {0, 0};
}
// ANCHOR_END: pipeline_state

// ANCHOR: pipeline
// One tensor's ring barriers (K's or V's): plain data, so it can live in static shared
// memory. One thread initializes them before the block's one barrier.
template <int SLOTS>
struct Pipeline {
    uint64_t full[SLOTS];   // completes when the producer's copy of the slot has landed
    uint64_t empty[SLOTS];  // completes when every consumer warp is done with the slot

    __device__ __forceinline__ void init(int consumer_warps) {
#pragma unroll
        for (int i = 0; i < SLOTS; ++i) {
            mbarrier_init(&full[i], 1);
            mbarrier_init(&empty[i], consumer_warps);
        }
    }
    // Producer: wait until the consumers released what the slot held before. A fresh
    // barrier counts the phase before its first as complete, so waiting on the opposite
    // parity lets the first SLOTS uses through at once.
    __device__ __forceinline__ void producer_acquire(PipelineState<SLOTS> st) { mbarrier_wait(&empty[st.index], st.phase ^ 1); }
    // Producer: one arrival expecting `bytes`; the copies that name the returned barrier
    // complete the phase as they land.
    __device__ __forceinline__ uint64_t* producer_expect(PipelineState<SLOTS> st, uint32_t bytes) {
        mbarrier_arrive_expect_tx(&full[st.index], bytes);
        return &full[st.index];
    }
    // Consumer: wait until the slot's tile has landed.
    __device__ __forceinline__ void consumer_wait(PipelineState<SLOTS> st) { mbarrier_wait(&full[st.index], st.phase); }
    // Consumer: this warp is done with the slot (its wgmmas that read it have completed).
    __device__ __forceinline__ void consumer_release(PipelineState<SLOTS> st) {
        if (threadIdx.x % 32 == 0) mbarrier_arrive(&empty[st.index]);
    }
};
// ANCHOR_END: pipeline

}  // namespace flashlab
