// Stage 17, the wide tile: stage 11's wgmma with the key tile one wgmma wide, 128 keys, and
// the softmax and epilogue as the parts every later Hopper stage shares (book: "Stage 17:
// the wide tile"). S = Q K^T is one m64n128k16 chain per warpgroup; with the products on
// wgmma, stage 9's row sums on the tensor cores no longer hide behind other mma.sync work,
// so the row sums are plain adds in the online-softmax object (hopper/softmax.cuh), and O
// leaves through the epilogue part (hopper/epilogue.cuh).
#include <flashlab/common.cuh>
#include <flashlab/hopper/epilogue.cuh>
#include <flashlab/hopper/mainloop.cuh>
#include <flashlab/hopper/scheduler.cuh>
#include <flashlab/hopper/softmax.cuh>
#include <flashlab/mbarrier.cuh>
#include <flashlab/timeline.cuh>
#include <flashlab/tma.cuh>

namespace flashlab {

// ANCHOR: tiles
constexpr int WARPGROUPS = 2;  // each owns 64 query rows: the M of one wgmma
constexpr int WARPS = WARPGROUPS * 4;
constexpr int THREADS = WARPS * 32;
constexpr int BLOCK_Q = WARPGROUPS * 64;
constexpr int BLOCK_KV = 128;  // the N of S's wgmma: S is 64 registers a thread
constexpr int NSTAGES = 2;     // ring depth: the slot of tile t-1 is refilled with tile t + NSTAGES - 1
// ANCHOR_END: tiles
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(BLOCK_Q);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);

template <typename T, int D, bool TIMELINE = false>
__device__ void wide_tile_attention(const AttnParams& p, const AttnTensorMaps& maps) {
    // The tiles, 1024-byte aligned for the 128-byte swizzle (tma.cuh: dynamic_smem_1024).
    T* q_smem = reinterpret_cast<T*>(dynamic_smem_1024());  // [D/64][BLOCK_Q][64], then O on its way out
    T* k_smem = q_smem + BLOCK_Q * D;                        // [NSTAGES][D/64][BLOCK_KV][64]
    T* v_smem = k_smem + NSTAGES * BLOCK_KV * D;             // [NSTAGES][D/64][BLOCK_KV][64]
    // One barrier for Q, one per ring slot for its K and V tiles together.
    __shared__ uint64_t q_full, kv_full[NSTAGES];
    const BlockWork w = in_order<BLOCK_Q, BLOCK_KV>(p);

    // One thread issues every copy, as in stage 10.
    const bool leader = threadIdx.x == 0;
    auto issue_kv = [&](int tile) {
        if (!leader || tile >= w.n_tiles) return;
        const int slot = tile % NSTAGES;
        mbarrier_arrive_expect_tx(&kv_full[slot], 2 * BLOCK_KV * D * sizeof(T));
        tma_load_tile<D, BLOCK_KV>(k_smem + slot * BLOCK_KV * D, &maps.k, &kv_full[slot], w.kv_head, tile * BLOCK_KV, w.b);
        tma_load_tile<D, BLOCK_KV>(v_smem + slot * BLOCK_KV * D, &maps.v, &kv_full[slot], w.kv_head, tile * BLOCK_KV, w.b);
    };
    if (leader) {
        mbarrier_init(&q_full, 1);
#pragma unroll
        for (int s = 0; s < NSTAGES; ++s) mbarrier_init(&kv_full[s], 1);
        mbarrier_init_fence();
        mbarrier_arrive_expect_tx(&q_full, BLOCK_Q * D * sizeof(T));
        tma_load_tile<D, BLOCK_Q>(q_smem, &maps.q, &q_full, w.h, w.q_start, w.b);
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < NSTAGES - 1; ++s) issue_kv(s);

    // ANCHOR: warpgroup
    // Warpgroup wg owns query rows 64 wg .. 64 wg + 63 of the block: its products, S, P
    // and O in its registers (hopper/mainloop.cuh), and its rows' softmax state.
    const int wg = threadIdx.x / 128;
    WarpgroupMma<T, D, BLOCK_Q, BLOCK_KV> mma(q_smem, wg);
    OnlineSoftmax<D, BLOCK_KV, (D >= 128)> softmax;  // the lazy rescale pays at D 128 (stage 9)
    const int row[2] = {w.q_start + mma.row(0), w.q_start + mma.row(1)};
    // ANCHOR_END: warpgroup

    Timeline<TIMELINE> tl(p, wg);  // the timeline kernels record each phase (timeline.cuh)
    mbarrier_wait(&q_full, 0);
    for (int t = 0; t < w.n_tiles; ++t) {
        // After the block barrier both warpgroups are done with tile t-1 (each waited for its
        // wgmmas), whose slot now receives tile t + NSTAGES - 1.
        FL_PHASE(tl, Phase::Sync, t, __syncthreads());
        issue_kv(t + NSTAGES - 1);
        FL_PHASE(tl, Phase::WaitFull, t, mbarrier_wait(&kv_full[t % NSTAGES], (t / NSTAGES) % 2));
        const int kv_start = t * BLOCK_KV;
        const T* k_smem_t = k_smem + (t % NSTAGES) * BLOCK_KV * D;  // this tile's slot
        const T* v_smem_t = v_smem + (t % NSTAGES) * BLOCK_KV * D;
        // ANCHOR: softmax_tile
        // The online softmax of S with P packed in place as P V's A operand; compiled with the
        // mask and without (masked_or_not: only the tiles at the edges need it).
        auto softmax_tile = [&](auto MASKED) {
            if constexpr (decltype(MASKED)::value) mask_scores<BLOCK_KV>(mma.s, p, kv_start, row);
            softmax.max_get_scale(mma.s, p.scale_log2);
            softmax.rescale_o(mma.o);
            softmax.exponentiate(mma.s, p.scale_log2);
            mma.p_from_s();
        };
        // ANCHOR_END: softmax_tile

        // ANCHOR: order
        // S = Q K^T, waited for; the online softmax of S, with P packed in place as P V's A
        // operand; O += P V, waited for.
        FL_PHASE(tl, Phase::Qk, t, mma.qk_issue(k_smem_t); mma.template wait_s<0>());
        FL_PHASE(tl, Phase::Softmax, t, masked_or_not<BLOCK_KV>(p, kv_start, w.q_start, softmax_tile));
        FL_PHASE(tl, Phase::Pv, t, mma.pv_issue(v_smem_t); mma.template wait_o<0>());
        // ANCHOR_END: order
    }

    // The epilogue (hopper/epilogue.cuh): O into Q's tile, each warpgroup into the rows only
    // its own wgmmas read, the LSE to global memory; after the block barrier one thread stores.
    FL_PHASE(tl, Phase::Epilogue, w.n_tiles, {
        float o_factor[2], lse[2];
        softmax.finalize(o_factor, lse);
        const int tile_row[2] = {mma.row(0), mma.row(1)};
        epilogue_write<T, D, BLOCK_Q>(p, q_smem, mma.o, o_factor, lse, tile_row, w);
        __syncthreads();
        if (leader) epilogue_store<T, D, BLOCK_Q>(maps, q_smem, w);
    });
    tl.clock();
}

}  // namespace flashlab

using flashlab::wide_tile_attention;
FLASHLAB_EXPORT_ALL_TMA(wide_tile, wide_tile_attention, flashlab::THREADS)
FLASHLAB_EXPORT_TIMELINE_TMA(wide_tile, wide_tile_attention, flashlab::THREADS)
