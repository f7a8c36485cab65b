// Stage 11, wgmma: stage 10's loads and softmax with the products moved from mma.sync to
// Hopper's warpgroup MMA (book: "Stage 11: wgmma"). A warpgroup of 4 warps issues one
// instruction for a 64 x 128 x 16 product, which runs asynchronously while its threads
// wait or work; both of S = Q K^T's operands are read from shared memory by the tensor
// cores themselves (no ldmatrix), and P for O += P V comes from registers, converted from
// S's accumulators in place, so P never touches shared memory. Two warpgroups each own
// 64 of the block's 128 query rows.
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mbarrier.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>
#include <flashlab/timeline.cuh>
#include <flashlab/tma.cuh>
#include <flashlab/wgmma.cuh>

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

// A compile-time int as a value, for the generic lambdas below.
template <int N>
struct Int {
    static constexpr int value = N;
};

template <typename T, int D, bool TIMELINE = false>
__device__ void wgmma_attention(const AttnParams& p, const AttnTensorMaps& maps) {
    // The 128-byte swizzle repeats every 1024 bytes and the copy engine swizzles by address
    // bits, so each tile must start 1024-byte aligned; dynamic shared memory is only
    // guaranteed 16, so the harness asks for 1 KiB more and the kernel aligns by hand.
    extern __shared__ unsigned char smem_unaligned[];
    unsigned char* smem = smem_unaligned + ((1024 - smem_addr(smem_unaligned) % 1024) % 1024);
    T* q_smem = reinterpret_cast<T*>(smem);       // [D/64][BLOCK_Q][64], then O on its way out
    T* k_smem = q_smem + BLOCK_Q * D;             // [NSTAGES][D/64][BLOCK_KV][64]
    T* v_smem = k_smem + NSTAGES * BLOCK_KV * D;  // [NSTAGES][D/64][BLOCK_KV][64]
    // One barrier for Q, one per ring slot for its K and V tiles together.
    __shared__ uint64_t q_full, kv_full[NSTAGES];

    // ANCHOR: warpgroup
    // Warpgroup wg owns query rows 64 wg .. 64 wg + 63 of the block; inside it, warp w's
    // accumulator rows are 16 w .. 16 w + 15, as in a m16n8 fragment (wgmma.cuh).
    const int wg = threadIdx.x / 128, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    // ANCHOR_END: warpgroup
    const int q_start = blockIdx.x * BLOCK_Q;
    const int h = blockIdx.y, b = blockIdx.z, kv_head = kv_head_of(p, h);

    int kv_end = p.seqlen_k;
    if (p.causal) kv_end = max(0, min(p.seqlen_k, causal_key_end(p, min(q_start + BLOCK_Q, p.seqlen_q) - 1)));
    const int n_tiles = ceil_div(kv_end, BLOCK_KV);

    // One thread issues every copy, as in stage 10.
    const bool leader = threadIdx.x == 0;
    auto load_tile = [&](T* tile_smem, const TensorMap* map, uint64_t* bar, int rows, int head, int row0) {
#pragma unroll
        for (int c = 0; c < D / 64; ++c) tma_load_4d(tile_smem + c * rows * 64, map, bar, c * 64, head, row0, b);
    };
    auto issue_kv = [&](int tile) {
        if (!leader || tile >= n_tiles) return;
        const int slot = tile % NSTAGES;
        mbarrier_arrive_expect_tx(&kv_full[slot], 2 * BLOCK_KV * D * sizeof(T));
        load_tile(k_smem + slot * BLOCK_KV * D, &maps.k, &kv_full[slot], BLOCK_KV, kv_head, tile * BLOCK_KV);
        load_tile(v_smem + slot * BLOCK_KV * D, &maps.v, &kv_full[slot], BLOCK_KV, kv_head, tile * BLOCK_KV);
    };
    if (leader) {
        mbarrier_init(&q_full, 1);
#pragma unroll
        for (int s = 0; s < NSTAGES; ++s) mbarrier_init(&kv_full[s], 1);
        mbarrier_init_fence();
        mbarrier_arrive_expect_tx(&q_full, BLOCK_Q * D * sizeof(T));
        load_tile(q_smem, &maps.q, &q_full, BLOCK_Q, h, q_start);
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < NSTAGES - 1; ++s) issue_kv(s);

    // What pays at D = 128 but not at D = 64 (stage 9's measurements): the lazy rescale.
    constexpr bool LAZY = D >= 128;

    // ANCHOR: accumulators
    // The warpgroup's 64 x D block of O and 64 x BLOCK_KV block of S, in registers: value
    // 4 n + e of a thread is element e of the m16n8 C fragment of columns 8 n .. 8 n + 7
    // (rows g and g + 8 of the warp's 16, g = lane / 4). Per thread: D / 2 and 64 floats.
    float o_rmem[D / 2] = {};
    float s_rmem[BLOCK_KV / 2];
    // P as the A operand of O += P V, one 64 x 16 k-step per [kk]: mma.sync's A layout per warp.
    uint32_t p_rmem[BLOCK_KV / 16][4];
    // ANCHOR_END: accumulators
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};  // in scaled log2 units
    float row_sum[2] = {0.f, 0.f};                      // this thread's part; the quad's at the end
    float rescale_o[2] = {1.f, 1.f};                    // LAZY: O's factor, applied just before P V
    auto q_row = [&](int r) { return q_start + wg * 64 + warp * 16 + quad_group(lane) + 8 * r; };

    // ANCHOR: descriptors
    // Descriptors of the k-step kk (16 columns of D) of this warpgroup's Q rows and of the K
    // tile: 32 bytes further inside a 64-column box, a whole box further every 4 steps. And
    // of the k-step kk (16 keys) of the V tile: 16 rows of 128 bytes further, its 64-column
    // boxes BLOCK_KV rows apart.
    auto q_desc = [&](int kk) {
        return wgmma_desc_sw128(q_smem + (kk / 4) * BLOCK_Q * 64 + wg * 64 * 64 + (kk % 4) * 16, 16, 1024);
    };
    auto k_desc = [&](const T* k_tile, int kk) { return wgmma_desc_sw128(k_tile + (kk / 4) * BLOCK_KV * 64 + (kk % 4) * 16, 16, 1024); };
    auto v_desc = [&](const T* v_tile, int kk) { return wgmma_desc_sw128(v_tile + kk * 16 * 64, BLOCK_KV * 64 * sizeof(T), 1024); };
    // ANCHOR_END: descriptors

    // ANCHOR: qk
    // S = Q K^T: D / 16 wgmmas into the same accumulators, one group, then wait for it.
    auto qk = [&](const T* k_tile) {
        wgmma_fence_operands(s_rmem);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) wgmma_ss<T, BLOCK_KV>(s_rmem, q_desc(kk), k_desc(k_tile, kk), kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(s_rmem);
    };
    // ANCHOR_END: qk

    // The online softmax of S: the mask (only where MASKED says so), the row max, the
    // rescale, and P in registers as P V's A operand, with its row sums.
    auto softmax = [&](auto MASKED, int kv_start) {
        float tile_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if constexpr (decltype(MASKED)::value) {
                    const int j = kv_start + n * 8 + mma_m16n8_c(lane, e).col;
                    if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, q_row(e / 2)))) s_rmem[4 * n + e] = -CUDART_INF_F;
                }
                tile_max[e / 2] = fmaxf(tile_max[e / 2], s_rmem[4 * n + e]);
            }
        }
        float m_base[2];  // what the exponent subtracts: the row max, 0 for a row with none
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float tile_max_scaled = quad_max(tile_max[r]) * p.scale_log2;
            float m_new = fmaxf(row_max[r], tile_max_scaled);
            if constexpr (LAZY) m_new = tile_max_scaled > row_max[r] + 8.f ? m_new : row_max[r];
            m_base[r] = m_new == -CUDART_INF_F ? 0.f : m_new;  // fully masked so far: avoid -inf - -inf
            const float rescale = fast_exp2(row_max[r] - m_base[r]);
            row_max[r] = m_new;
            row_sum[r] *= rescale;
            if constexpr (LAZY) {
                rescale_o[r] = rescale;
            } else {
#pragma unroll
                for (int n = 0; n < D / 8; ++n) {
                    o_rmem[4 * n + 2 * r] *= rescale;
                    o_rmem[4 * n + 2 * r + 1] *= rescale;
                }
            }
        }
        // ANCHOR: p_from_s
        // S's accumulator layout and P's A-operand layout agree register for register (both
        // are mma.sync's per warp), so P is S exponentiated and packed in place: keys
        // 16 kk .. 16 kk + 15 are S's column blocks 2 kk and 2 kk + 1.
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk)
#pragma unroll
            for (int n = 2 * kk; n < 2 * kk + 2; ++n)
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    const float p0 = fast_exp2(fmaf(s_rmem[4 * n + 2 * r], p.scale_log2, -m_base[r]));
                    const float p1 = fast_exp2(fmaf(s_rmem[4 * n + 2 * r + 1], p.scale_log2, -m_base[r]));
                    row_sum[r] += p0 + p1;
                    p_rmem[kk][(n % 2) * 2 + r] = pack2<T>(p0, p1);
                }
        // ANCHOR_END: p_from_s
    };

    // LAZY: O's rescale, before P V and only when some row of the warp needs it.
    auto rescale_o_lazily = [&]() {
        const bool needed = rescale_o[0] != 1.f || rescale_o[1] != 1.f;
        if (__any_sync(0xffffffff, needed)) {
#pragma unroll
            for (int n = 0; n < D / 8; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) o_rmem[4 * n + e] *= rescale_o[e / 2];
        }
    };

    // ANCHOR: pv
    // O += P V: BLOCK_KV / 16 wgmmas, A (P) from registers, B (V) from shared memory. The
    // fence makes the registers just written by ordinary instructions (P, and O if it was
    // rescaled) part of what the wgmmas read.
    auto pv = [&](const T* v_tile) {
        wgmma_fence_operands(o_rmem);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) wgmma_rs_mn<T, D>(o_rmem, p_rmem[kk], v_desc(v_tile, kk), true);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(o_rmem);
    };
    // ANCHOR_END: pv

    auto needs_mask = [&](int kv_start) {
        return kv_start + BLOCK_KV > p.seqlen_k || (p.causal && kv_start + BLOCK_KV > causal_key_end(p, q_start));
    };

    // The timeline kernels record each phase (timeline.cuh); in the timed ones tl is empty.
    Timeline<TIMELINE> tl(p, wg);
    mbarrier_wait(&q_full, 0);
    for (int t = 0; t < n_tiles; ++t) {
        // After the block barrier both warpgroups are done with tile t-1 (each waited for its
        // wgmmas), whose slot now receives tile t + NSTAGES - 1.
        uint64_t t0 = tl.now();
        __syncthreads();
        tl.record(Phase::Sync, t, t0);
        issue_kv(t + NSTAGES - 1);
        t0 = tl.now();
        mbarrier_wait(&kv_full[t % NSTAGES], (t / NSTAGES) % 2);
        tl.record(Phase::WaitFull, t, t0);
        const int kv_start = t * BLOCK_KV;
        const T* k_smem_t = k_smem + (t % NSTAGES) * BLOCK_KV * D;  // this tile's slot
        const T* v_smem_t = v_smem + (t % NSTAGES) * BLOCK_KV * D;

        // ANCHOR: order
        t0 = tl.now();
        qk(k_smem_t);
        tl.record(Phase::Qk, t, t0);
        t0 = tl.now();
        if (needs_mask(kv_start))
            softmax(Int<1>{}, kv_start);
        else
            softmax(Int<0>{}, kv_start);
        if constexpr (LAZY) rescale_o_lazily();
        tl.record(Phase::Softmax, t, t0);
        t0 = tl.now();
        pv(v_smem_t);
        tl.record(Phase::Pv, t, t0);
        // ANCHOR_END: order
    }

    const uint64_t t_epilogue = tl.now();
    // Finalize: the row sums across the quad, O into Q's tile (each warpgroup into the rows
    // only its own wgmmas read, all complete), the LSE straight to global memory.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const float sum = quad_sum(row_sum[r]);
        const float inv_sum = sum > 0.f ? 1.f / sum : 1.f;  // fully masked: O stays 0
        const int row = q_row(r) - q_start;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            const int col = n * 8 + mma_m16n8_c(lane, 0).col;
            *reinterpret_cast<uint32_t*>(q_smem + tile_offset_tma<BLOCK_Q>(row, col)) =
                pack2<T>(o_rmem[4 * n + 2 * r] * inv_sum, o_rmem[4 * n + 2 * r + 1] * inv_sum);
        }
        if (q_row(r) < p.seqlen_q && quad_lane(lane) == 0)
            p.lse[lse_index(p, b, h, q_row(r))] = sum > 0.f ? (row_max[r] + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
    }
    fence_proxy_async_smem();
    __syncthreads();
    if (leader) {
#pragma unroll
        for (int c = 0; c < D / 64; ++c) tma_store_4d(&maps.o, q_smem + c * BLOCK_Q * 64, c * 64, h, q_start, b);
        tma_store_commit();
        tma_store_wait_read();
    }
    tl.record(Phase::Epilogue, n_tiles, t_epilogue);
    tl.clock();
}

}  // namespace flashlab

using flashlab::wgmma_attention;
FLASHLAB_EXPORT_ALL_TMA(wgmma, wgmma_attention, flashlab::THREADS)
FLASHLAB_EXPORT_TIMELINE_TMA(wgmma, wgmma_attention, flashlab::THREADS)
