// Stage 11, wgmma: stage 10's loads, ring, tile and softmax with both products moved from
// each warp's mma.sync to Hopper's warpgroup MMA (book: "Stage 11: wgmma"). Four warps
// issue one instruction for a 64 x 64 x 16 product, which runs asynchronously while their
// threads wait or work; both of S = Q K^T's operands are read from shared memory by the
// tensor cores themselves (no ldmatrix), and P for O += P V comes from registers, so P
// never touches shared memory. Stage 10's 128 x 64 tile stays: two warpgroups each own 64
// of its 128 query rows, the M of one wgmma.
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/hopper/mainloop.cuh>
#include <flashlab/hopper/scheduler.cuh>
#include <flashlab/mbarrier.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>
#include <flashlab/timeline.cuh>
#include <flashlab/tma.cuh>

namespace flashlab {

// ANCHOR: tiles
constexpr int WARPGROUPS = 2;  // each owns 64 query rows: the M of one wgmma
constexpr int WARPS = WARPGROUPS * 4;
constexpr int THREADS = WARPS * 32;
constexpr int MT = 1;  // m16 row tiles per warp: a warp's 16 rows of its warpgroup's 64
constexpr int BLOCK_Q = WARPS * 16 * MT;
constexpr int BLOCK_KV = 64;
constexpr int NSTAGES = 2;  // ring depth: the slot of tile t-1 is refilled with tile t + NSTAGES - 1
// ANCHOR_END: tiles
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(BLOCK_Q);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);

template <typename T, int D, bool TIMELINE = false>
__device__ void wgmma_attention(const AttnParams& p, const AttnTensorMaps& maps) {
    // ANCHOR: smem
    // The tiles, 1024-byte aligned for the 128-byte swizzle (tma.cuh: dynamic_smem_1024).
    T* q_smem = reinterpret_cast<T*>(dynamic_smem_1024());  // [D/64][BLOCK_Q][64], then O on its way out
    T* k_smem = q_smem + BLOCK_Q * D;             // [NSTAGES][D/64][BLOCK_KV][64]
    T* v_smem = k_smem + NSTAGES * BLOCK_KV * D;  // [NSTAGES][D/64][BLOCK_KV][64]
    // One barrier for Q, one per ring slot for its K and V tiles together.
    __shared__ uint64_t q_full, kv_full[NSTAGES];
    // ANCHOR_END: smem

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Which query rows of which head, and how many K/V tiles they see (hopper/scheduler.cuh:
    // stage 10's arithmetic, as a part the later stages reorder).
    const BlockWork w = in_order<BLOCK_Q, BLOCK_KV>(p);

    // ANCHOR: issue
    // One thread issues every copy, a [ROWS][D] tile as D / 64 boxes (tma.cuh: tma_load_tile).
    const bool leader = threadIdx.x == 0;
    // Tile `tile`'s K and V into its slot: one arrival that expects both tiles' bytes (the
    // zero-filled ones count too), then the copies, which complete the phase as they land.
    auto issue_kv = [&](int tile) {
        if (!leader || tile >= w.n_tiles) return;
        const int slot = tile % NSTAGES;
        mbarrier_arrive_expect_tx(&kv_full[slot], 2 * BLOCK_KV * D * sizeof(T));
        tma_load_tile<D, BLOCK_KV>(k_smem + slot * BLOCK_KV * D, &maps.k, &kv_full[slot], w.kv_head, tile * BLOCK_KV, w.b);
        tma_load_tile<D, BLOCK_KV>(v_smem + slot * BLOCK_KV * D, &maps.v, &kv_full[slot], w.kv_head, tile * BLOCK_KV, w.b);
    };

    // Prologue: the barriers, made visible to the copy engine and then to every thread; Q;
    // the first NSTAGES - 1 tiles.
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
    // ANCHOR_END: issue

    // ANCHOR: per_head_dim
    // What pays at D = 128 but not at D = 64 (stage 9's measurements): the lazy rescale.
    constexpr bool LAZY = D >= 128;
    // ANCHOR_END: per_head_dim

    // ANCHOR: warpgroup
    // Warpgroup wg owns query rows 64 wg .. 64 wg + 63 of the block: its products, S, P
    // and O in its registers (hopper/mainloop.cuh). A warp's part of each is its 16 rows in
    // the layout of an m16n8 fragment, stage 10's, so stage 10's names, and its softmax, hold.
    WarpgroupMma<T, D, BLOCK_Q, BLOCK_KV> mma(q_smem, threadIdx.x / 128);
    float (&o_rmem)[MT][D / 8][4] = reinterpret_cast<float (&)[MT][D / 8][4]>(mma.o);
    float (&s_rmem)[MT][BLOCK_KV / 8][4] = reinterpret_cast<float (&)[MT][BLOCK_KV / 8][4]>(mma.s);
    uint32_t (&p_rmem)[MT][BLOCK_KV / 16][4] = reinterpret_cast<uint32_t (&)[MT][BLOCK_KV / 16][4]>(mma.p);
    // ANCHOR_END: warpgroup
    // Per lane and m16 tile m: rows g and g + 8 of the tile, so [MT][2] of each row state.
    float row_max[MT][2];  // in scaled log2 units
    // The row sums as the C fragment of P times ones: every column holds the whole row's sum.
    float l_frag[MT][4] = {};
    float rescale_o[MT][2];  // LAZY: O's factor, applied just before P V
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int r = 0; r < 2; ++r) row_max[m][r] = -CUDART_INF_F;
    // The query row of this lane's row r of m16 tile m, computed where it is needed (the
    // mask and the epilogue) rather than kept in registers across the loop.
    auto q_row = [&](int m, int r) { return w.q_start + (warp * MT + m) * 16 + quad_group(lane) + 8 * r; };
    // The online softmax of m16 tile M, in two parts. max_and_rescale: the mask (only where
    // MASKED says so), the row max, the rescale of the row sum and of O. probabilities: P's
    // k-step kk (keys 16 kk .. 16 kk + 15) in registers, as P V's A fragment.
    float m_base[MT][2];  // what the exponent subtracts: the row max, 0 for a row with none
    auto max_and_rescale = [&](auto M, auto MASKED, int kv_start) {
        constexpr int m = decltype(M)::value;
        float tile_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if constexpr (decltype(MASKED)::value) {
                    const int j = kv_start + n * 8 + mma_m16n8_c(lane, e).col;
                    if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, q_row(m, e / 2)))) s_rmem[m][n][e] = -CUDART_INF_F;
                }
                tile_max[e / 2] = fmaxf(tile_max[e / 2], s_rmem[m][n][e]);
            }
        }
        // ANCHOR: rescale
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float tile_max_scaled = quad_max(tile_max[r]) * p.scale_log2;
            float m_new = fmaxf(row_max[m][r], tile_max_scaled);
            // LAZY: keep the old max unless the new one is more than 8 larger (log2 units), so
            // P stays below 2^8, exact in bf16 and f16, and after the first tiles O's rescale
            // is almost always skipped.
            if constexpr (LAZY) m_new = tile_max_scaled > row_max[m][r] + 8.f ? m_new : row_max[m][r];
            m_base[m][r] = m_new == -CUDART_INF_F ? 0.f : m_new;  // fully masked so far: avoid -inf - -inf
            const float rescale = fast_exp2(row_max[m][r] - m_base[m][r]);
            row_max[m][r] = m_new;
            l_frag[m][2 * r] *= rescale;
            if constexpr (LAZY) {
                rescale_o[m][r] = rescale;
            } else {
#pragma unroll
                for (int n = 0; n < D / 8; ++n) {
                    o_rmem[m][n][2 * r] *= rescale;
                    o_rmem[m][n][2 * r + 1] *= rescale;
                }
            }
        }
        // ANCHOR_END: rescale
    };

    // ANCHOR: probabilities
    // P's k-step kk, and its row sums on the tensor cores: P times a B fragment of ones
    // leaves each row's sum over the k-step's 16 keys in every column of C, the whole row's
    // and not one lane's, so no shuffles either; and the sum is of P as rounded for P V.
    auto probabilities = [&](auto M, int kk) {
        constexpr int m = decltype(M)::value;
#pragma unroll
        for (int n = 2 * kk; n < 2 * kk + 2; ++n)
#pragma unroll
            for (int h2 = 0; h2 < 2; ++h2)
                p_rmem[m][kk][(n % 2) * 2 + h2] = pack2<T>(fast_exp2(fmaf(s_rmem[m][n][2 * h2], p.scale_log2, -m_base[m][h2])),
                                                           fast_exp2(fmaf(s_rmem[m][n][2 * h2 + 1], p.scale_log2, -m_base[m][h2])));
        mma_m16n8k16<T>(l_frag[m], p_rmem[m][kk], ones2<T>(), ones2<T>());
    };
    // ANCHOR_END: probabilities


    // ANCHOR: rescale_o_lazily
    // LAZY: O's rescale, before P V and only when some row of the warp needs it; the
    // warp-uniform branch costs a vote, and skips 128 FMUL per tile at D = 128.
    auto rescale_o_lazily = [&]() {
        bool needed = false;
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int r = 0; r < 2; ++r) needed |= rescale_o[m][r] != 1.f;
        if (__any_sync(0xffffffff, needed)) {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int n = 0; n < D / 8; ++n)
#pragma unroll
                    for (int e = 0; e < 4; ++e) o_rmem[m][n][e] *= rescale_o[m][e / 2];
        }
    };
    // ANCHOR_END: rescale_o_lazily

    Timeline<TIMELINE> tl(p, threadIdx.x / 128);  // the timeline kernels record each phase (timeline.cuh)
    mbarrier_wait(&q_full, 0);
    for (int t = 0; t < w.n_tiles; ++t) {
        // ANCHOR: ring
        // After the block barrier every warp is done with tile t-1 (each waited for its
        // wgmmas), whose slot now receives tile t + NSTAGES - 1; then each thread waits for
        // tile t's phase of its slot: the slot's n-th use completes its barrier's n-th phase.
        FL_PHASE(tl, Phase::Sync, t, __syncthreads());
        issue_kv(t + NSTAGES - 1);
        FL_PHASE(tl, Phase::WaitFull, t, mbarrier_wait(&kv_full[t % NSTAGES], (t / NSTAGES) % 2));
        // ANCHOR_END: ring
        const int kv_start = t * BLOCK_KV;
        const T* k_smem_t = k_smem + (t % NSTAGES) * BLOCK_KV * D;  // this tile's slot
        const T* v_smem_t = v_smem + (t % NSTAGES) * BLOCK_KV * D;

        // ANCHOR: order
        // S = Q K^T, issued and waited for; the softmax, with P in registers; O += P V,
        // waited for.
        auto softmax_tile = [&](auto MASKED) {
            max_and_rescale(Int<0>{}, MASKED, kv_start);
#pragma unroll
            for (int kk = 0; kk < BLOCK_KV / 16; ++kk) probabilities(Int<0>{}, kk);
            if constexpr (LAZY) rescale_o_lazily();
        };
        FL_PHASE(tl, Phase::Qk, t, mma.qk_issue(k_smem_t); mma.template wait_s<0>());
        FL_PHASE(tl, Phase::Softmax, t, masked_or_not<BLOCK_KV>(p, kv_start, w.q_start, softmax_tile));
        FL_PHASE(tl, Phase::Pv, t, mma.pv_issue(v_smem_t); mma.template wait_o<0>());
        // ANCHOR_END: order
    }

    // ANCHOR: epilogue
    // Finalize: divide by the row sums (whole already), write O into Q's tile (each
    // warpgroup into the rows only its own wgmmas read, and they are complete) and the LSE
    // straight to global memory.
    FL_PHASE(tl, Phase::Epilogue, w.n_tiles, {
#pragma unroll
        for (int m = 0; m < MT; ++m) {
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const float sum = l_frag[m][2 * r];
                const float inv_sum = sum > 0.f ? 1.f / sum : 1.f;  // fully masked: O stays 0
                const int row = q_row(m, r) - w.q_start;
#pragma unroll
                for (int n = 0; n < D / 8; ++n) {
                    const int col = n * 8 + mma_m16n8_c(lane, 0).col;
                    *reinterpret_cast<uint32_t*>(q_smem + tile_offset_tma<BLOCK_Q>(row, col)) =
                        pack2<T>(o_rmem[m][n][2 * r] * inv_sum, o_rmem[m][n][2 * r + 1] * inv_sum);
                }
                if (q_row(m, r) >= p.seqlen_q) continue;
                if (quad_lane(lane) == 0)
                    p.lse[lse_index(p, w.b, w.h, q_row(m, r))] = sum > 0.f ? (row_max[m][r] + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
            }
        }
        // The TMA store reads the tile through the async proxy: each thread fences its writes,
        // the barrier gathers them, one thread stores (rows past seqlen_q are dropped) and waits
        // until the copy has read shared memory before the block may exit.
        fence_proxy_async_smem();
        __syncthreads();
        if (leader) {
#pragma unroll
            for (int c = 0; c < D / 64; ++c) tma_store_4d(&maps.o, q_smem + c * BLOCK_Q * 64, c * 64, w.h, w.q_start, w.b);
            tma_store_commit();
            tma_store_wait_read();
        }
    });
    // ANCHOR_END: epilogue
    tl.clock();
}

}  // namespace flashlab

using flashlab::wgmma_attention;
FLASHLAB_EXPORT_ALL_TMA(wgmma, wgmma_attention, flashlab::THREADS)
// The timed kernel fits two blocks an SM (at most 128 registers a thread); its timeline
// build is held to the same, so that the timeline shows the kernel that was timed.
FLASHLAB_EXPORT_TIMELINE_TMA_BLOCKS(wgmma, wgmma_attention, flashlab::THREADS, 2)
