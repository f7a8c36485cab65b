// hopper/backward_producer.cuh: the load warp of the Hopper backward (FlashAttention-3's
// backward `load`). K and V of the block's keys arrive once; then, for each query block the
// keys see, Q and dO by TMA into the next ring slot, and the rows' LSE and D, which the
// warp's lanes copy themselves: the LSE and D tensors are [batch][heads][seqlen_q] floats,
// whose rows are not 16-byte aligned at every seqlen_q, as TMA would need.
// Book: "Stage 23: the backward on Hopper", section "The roles".
#pragma once
#include "../backward.cuh"
#include "../common.cuh"
#include "../mbarrier.cuh"
#include "../timeline.cuh"
#include "../tma.cuh"
#include "backward_scheduler.cuh"
#include "backward_tiles.cuh"
#include "pipeline.cuh"

namespace flashlab {

// ANCHOR: producer
// Run by the 32 lanes of one warp. Each slot's full barrier completes when all 32 have
// arrived, each after storing its BLOCK_M / 32 rows' terms, and Q's and dO's bytes have
// landed (lane 0's arrival expects them). A row past seqlen_q, or one that saw no key in the
// forward (LSE -inf), gets LSE +inf in log2 units: exp2(S scale_log2 - LSE) is then 0 with
// no mask, and its D is 0, so its dS is 0 and it adds nothing to dK, nor to dQ's padding
// rows. The producer's 24 registers hold at BLOCK_M 128 (4 rows a lane) unspilled because
// it counts its steps down, indexes LSE and D in 32 bits and copies a row's LSE and D in
// one pass over a precomputed bound (ptxas spilled 8 to 20 bytes without them).
// The timeline build records the warp's lane 0 in slot 0 (hopper_backward.cu's roles).
template <typename T, int D, int BLOCK_M, int BLOCK_N, int SLOTS, bool TIMELINE = false>
__device__ __forceinline__ void load(const BwdParams& bp, const BwdTensorMaps& maps, const BwdSharedTiles<T, D, BLOCK_M, BLOCK_N, SLOTS>& s,
                                     const BwdWork& w) {
    const AttnParams& p = bp.fwd;
    Timeline<TIMELINE> tl(p, 0, 32);
    const int lane = threadIdx.x % 32;
    if (lane == 0) {
        mbarrier_arrive_expect_tx(&s.bar->kv_full, 2 * BLOCK_N * D * sizeof(T));
        tma_load_tile<D, BLOCK_N>(s.k, &maps.k, &s.bar->kv_full, w.kv_head, w.n_start, w.b);
        tma_load_tile<D, BLOCK_N>(s.v, &maps.v, &s.bar->kv_full, w.kv_head, w.n_start, w.b);
    }
    auto st = pipeline_start<SLOTS>();
    // for_each_query_block's steps in its order, counted down: the loads need no step index
    // (only the timeline build's records do), and one counter instead of a step and a bound
    // keeps the 24 registers unspilled (ptxas spilled the bound).
    int h = w.h_first, m = w.m_first;
#pragma unroll 1
    for (int left = w.steps(); left > 0; --left) {
        const int step = w.steps() - left;  // the timeline's iteration: dead code in a timed build
        FL_PHASE(tl, Phase::WaitEmpty, step, s.bar->qdo.producer_acquire(st));
        const uint64_t loading = tl.now();  // Load: the rows' terms stored, Q's and dO's copies issued
        float* rows = s.rows_slot(st);
        const int q_start = m * BLOCK_M;
        // The block's rows in LSE and D (lse_index in 32 bits: the LSE and D tensors are
        // batch x heads x seqlen_q floats, fewer than Q's elements, which the harness keeps
        // below 2^31), and how many of its BLOCK_M rows are below seqlen_q.
        const int at = (w.b * p.heads + h) * p.seqlen_q + q_start;
        const float* lse_rows = p.lse + at;
        const float* delta_rows = bp.delta + at;
        const int valid = p.seqlen_q - q_start;
#pragma unroll
        for (int i = 0; i < BLOCK_M / 32; ++i) {
            const int r = lane + 32 * i;
            const bool in = r < valid;
            const float lse = in ? lse_rows[r] : -CUDART_INF_F;
            rows[r] = lse == -CUDART_INF_F ? CUDART_INF_F : lse * CUDART_L2E_F;
            rows[BLOCK_M + r] = in ? delta_rows[r] : 0.f;
        }
        if (lane == 0) {
            uint64_t* full = s.bar->qdo.producer_expect(st, 2 * BLOCK_M * D * sizeof(T));
            tma_load_tile<D, BLOCK_M>(s.q_slot(st), &maps.q, full, h, q_start, w.b);
            tma_load_tile<D, BLOCK_M>(s.do_slot(st), &maps.d_o, full, h, q_start, w.b);
        } else {
            mbarrier_arrive(&s.bar->qdo.full[st.index]);
        }
        tl.record(Phase::Load, step, loading);
        st.advance();
        if (++m == w.m_end) {
            m = w.m_first;
            ++h;
        }
    }
    tl.clock();
}
// ANCHOR_END: producer

}  // namespace flashlab
