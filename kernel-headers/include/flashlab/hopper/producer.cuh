// hopper/producer.cuh: the block's shared memory as the roles see it (Q's tile, the K and V
// rings and their barriers) and the producer's load loop. One thread of the producer
// warpgroup issues every copy: Q once, then each K and V tile into its ring slot as soon as
// the consumers have released the slot (FlashAttention-3's `load`).
// Book: "Stage 12: warp specialization", section "Roles".
#pragma once
#include "../common.cuh"
#include "../mbarrier.cuh"
#include "../timeline.cuh"
#include "../tma.cuh"
#include "pipeline.cuh"
#include "scheduler.cuh"

namespace flashlab {

// ANCHOR: shared_tiles
// The barriers, plain data in static shared memory: Q's, and a full/empty pair a slot for
// each of K and V, so a consumer can start S = Q K^T before V's tile has landed.
template <int SLOTS>
struct RingBarriers {
    uint64_t q_full;
    Pipeline<SLOTS> k, v;
    // By one thread, before the block's barrier that publishes them: an empty barrier's
    // phase completes when every consumer warp has arrived.
    __device__ __forceinline__ void init(int consumer_warps) {
        mbarrier_init(&q_full, 1);
        k.init(consumer_warps);
        v.init(consumer_warps);
        mbarrier_init_fence();
    }
};
// The tiles, carved out of the aligned dynamic shared memory: Q (then O on its way out)
// [D/64][BLOCK_Q][64], then the K and V rings, [SLOTS][D/64][BLOCK_KV][64] each.
template <typename T, int D, int BLOCK_Q, int BLOCK_KV, int SLOTS>
struct SharedTiles {
    T* q;
    T* k;
    T* v;
    RingBarriers<SLOTS>* bar;
    __device__ SharedTiles(RingBarriers<SLOTS>& barriers)
        : q(reinterpret_cast<T*>(dynamic_smem_1024())), k(q + BLOCK_Q * D), v(k + SLOTS * BLOCK_KV * D), bar(&barriers) {}
    __device__ __forceinline__ T* k_slot(PipelineState<SLOTS> st) const { return k + st.index * BLOCK_KV * D; }
    __device__ __forceinline__ T* v_slot(PipelineState<SLOTS> st) const { return v + st.index * BLOCK_KV * D; }
};
// ANCHOR_END: shared_tiles

// ANCHOR: load
// The producer: Q, then for each tile its K into the next slot once the slot is empty, and
// its V the same way. The bytes of each copy complete the slot's full barrier.
template <typename T, int D, int BLOCK_Q, int BLOCK_KV, int SLOTS, bool TIMELINE>
__device__ __forceinline__ void load(const AttnParams& p, const AttnTensorMaps& maps, const SharedTiles<T, D, BLOCK_Q, BLOCK_KV, SLOTS>& s,
                                     const BlockWork& w) {
    Timeline<TIMELINE> tl(p, 0);
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(&s.bar->q_full, BLOCK_Q * D * sizeof(T));
        tma_load_tile<D, BLOCK_Q>(s.q, &maps.q, &s.bar->q_full, w.h, w.q_start, w.b);
        constexpr uint32_t TILE_BYTES = BLOCK_KV * D * sizeof(T);
        auto st = pipeline_start<SLOTS>();
        for (int t = 0; t < w.n_tiles; ++t, st.advance()) {
            FL_PHASE(tl, Phase::WaitEmpty, t, s.bar->k.producer_acquire(st));
            FL_PHASE(tl, Phase::Load, t, tma_load_tile<D, BLOCK_KV>(s.k_slot(st), &maps.k, s.bar->k.producer_expect(st, TILE_BYTES), w.kv_head, t * BLOCK_KV, w.b));
            FL_PHASE(tl, Phase::WaitEmpty, t, s.bar->v.producer_acquire(st));
            FL_PHASE(tl, Phase::Load, t, tma_load_tile<D, BLOCK_KV>(s.v_slot(st), &maps.v, s.bar->v.producer_expect(st, TILE_BYTES), w.kv_head, t * BLOCK_KV, w.b));
        }
    }
    tl.clock();
}
// ANCHOR_END: load

}  // namespace flashlab
