// hopper/softmax.cuh: the online softmax of a consumer warpgroup's rows, as an object that
// keeps each row's running max and sum across K/V tiles (FlashAttention-3's `Softmax`).
// Its scores are a wgmma accumulator: value 4 n + e of a thread is element e of the m16n8
// C fragment of columns 8 n .. 8 n + 7 (wgmma.cuh), so a thread holds parts of two rows,
// r = e / 2, and the four threads of a quad hold the rest of them.
// Book: "Stage 17: the wide tile", section "Named parts".
#pragma once
#include "../common.cuh"
#include "../fragments.cuh"

namespace flashlab {

// ANCHOR: mask
// -inf for each score whose key is past seqlen_k or, causal, past its row's last key;
// `row[r]` is the query row of the thread's row r.
template <int N>
__device__ __forceinline__ void mask_scores(float (&s)[N / 2], const AttnParams& p, int kv_start, const int (&row)[2]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int n = 0; n < N / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int j = kv_start + n * 8 + mma_m16n8_c(lane, e).col;
            if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, row[e / 2]))) s[4 * n + e] = -CUDART_INF_F;
        }
}
// ANCHOR_END: mask

// ANCHOR: online_softmax
// LAZY (what pays at D = 128, stage 9's measurements): keep the old max unless the new one
// is more than 8 larger (log2 units), so P stays below 2^8, exact enough in bf16 and f16,
// and after the first tiles O's rescale is almost always skipped.
// P_LOG2_OFFSET (the FP8 stages' 8): P comes out multiplied by 2^P_LOG2_OFFSET, its largest
// value 256 instead of 1, where E4M3 keeps 3 mantissa bits rather than running into its
// subnormals; the row sum carries the same factor, so O / sum is unchanged, and the LSE takes
// it back out. Not with LAZY, whose P may already reach 2^8 and would pass E4M3's 448.
template <int D, int BLOCK_KV, bool LAZY, int P_LOG2_OFFSET = 0>
struct OnlineSoftmax {
    static_assert(!(LAZY && P_LOG2_OFFSET), "a lazy max lets P reach 2^8 before any offset");
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};  // in scaled log2 units
    float row_sum[2] = {0.f, 0.f};                      // this thread's part; the quad's in finalize
    float o_scale[2] = {1.f, 1.f};                      // O's factor, for rescale_o
    float m_base[2];  // what the exponent subtracts: the row max, 0 for a row with none

    // The tile's row max, across the quad; the new running max; the factor that takes O
    // and the row sum from the old max to the new one (the sum is rescaled here, O later).
    __device__ __forceinline__ void max_get_scale(const float (&s)[BLOCK_KV / 2], float scale_log2) {
        float tile_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int i = 0; i < BLOCK_KV / 2; ++i) tile_max[i % 4 / 2] = fmaxf(tile_max[i % 4 / 2], s[i]);
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float tile_max_scaled = quad_max(tile_max[r]) * scale_log2;
            float m_new = fmaxf(row_max[r], tile_max_scaled);
            if constexpr (LAZY) m_new = tile_max_scaled > row_max[r] + 8.f ? m_new : row_max[r];
            m_base[r] = m_new == -CUDART_INF_F ? 0.f : m_new;  // fully masked so far: avoid -inf - -inf
            o_scale[r] = fast_exp2(row_max[r] - m_base[r]);
            if constexpr (P_LOG2_OFFSET != 0) m_base[r] -= P_LOG2_OFFSET;
            row_max[r] = m_new;
            row_sum[r] *= o_scale[r];
        }
    }
    // P = exp2(S scale_log2 - max), in place in S's registers, and the row sums.
    __device__ __forceinline__ void exponentiate(float (&s)[BLOCK_KV / 2], float scale_log2) {
        exponentiate_part<0, BLOCK_KV / 2>(s, scale_log2);
    }
    // The same for values BEGIN .. END - 1 of the thread's scores alone, for a consumer that
    // waits for something between two parts (stage 26 waits for P V).
    template <int BEGIN, int END>
    __device__ __forceinline__ void exponentiate_part(float (&s)[BLOCK_KV / 2], float scale_log2) {
#pragma unroll
        for (int i = BEGIN; i < END; ++i) {
            s[i] = fast_exp2(fmaf(s[i], scale_log2, -m_base[i % 4 / 2]));
            row_sum[i % 4 / 2] += s[i];
        }
    }
    // O *= its factor, before the next P V accumulates into it. LAZY: only when some row of
    // the warp needs it; the warp-uniform branch costs a vote.
    __device__ __forceinline__ void rescale_o(float (&o)[D / 2]) const {
        if (LAZY && !__any_sync(0xffffffff, o_scale[0] != 1.f || o_scale[1] != 1.f)) return;
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o[i] *= o_scale[i % 4 / 2];
    }
    // After the last tile: the row sums across the quad, what O is multiplied by (1 for a
    // fully masked row, whose O stays 0) and the natural-log LSE (-inf for such a row).
    __device__ __forceinline__ void finalize(float (&o_factor)[2], float (&lse)[2]) const {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float sum = quad_sum(row_sum[r]);
            o_factor[r] = sum > 0.f ? 1.f / sum : 1.f;
            if constexpr (P_LOG2_OFFSET == 0)
                lse[r] = sum > 0.f ? (row_max[r] + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
            else
                lse[r] = sum > 0.f ? (row_max[r] + log2f(sum) - P_LOG2_OFFSET) * CUDART_LN2_F : -CUDART_INF_F;
        }
    }
};
// ANCHOR_END: online_softmax

}  // namespace flashlab
