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
// arrived, each after storing its rows' terms, and Q's and dO's bytes have landed (lane 0's
// arrival expects them). A row past seqlen_q, or one that saw no key in the forward (LSE
// -inf), gets LSE +inf in log2 units: exp2(S scale_log2 - LSE) is then 0 with no mask, and
// its D is 0, so its dS is 0 and it adds nothing to dK, nor to dQ's padding rows.
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
    for_each_query_block(w, [&](int h, int m, int step) {
        FL_PHASE(tl, Phase::WaitEmpty, step, s.bar->qdo.producer_acquire(st));
        const uint64_t loading = tl.now();  // Load: the rows' terms stored, Q's and dO's copies issued
        float* rows = s.rows_slot(st);
        const int q_start = m * BLOCK_M;
        const long long at = lse_index(p, w.b, h, q_start);  // the block's first row in LSE and D
#pragma unroll
        for (int r = lane; r < BLOCK_M; r += 32) {
            const bool in = q_start + r < p.seqlen_q;
            const float lse = in ? p.lse[at + r] : -CUDART_INF_F;
            rows[r] = lse == -CUDART_INF_F ? CUDART_INF_F : lse * CUDART_L2E_F;
            rows[BLOCK_M + r] = in ? bp.delta[at + r] : 0.f;
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
    });
    tl.clock();
}
// ANCHOR_END: producer

}  // namespace flashlab
