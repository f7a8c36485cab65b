// Stage 1, naive attention: three kernels and the whole score matrix in global memory.
//   S = Q K^T * scale    (naive_scores:  one thread per score)
//   P = softmax(S)       (naive_softmax: one thread per row, three passes, in place)
//   O = P V              (naive_output:  one thread per output element)
// S lives in `p.scratch` as fp32 [batch, heads, seqlen_q, seqlen_k]: 4·Sq·Sk bytes per
// head, which is why this stage stops fitting long before the others. Book: "Stage 1".
#include <flashlab/common.cuh>

namespace flashlab {

constexpr int TILE = 16;               // 16 x 16 threads per block for the two products
constexpr int SOFTMAX_THREADS = 256;  // one thread per row
FLASHLAB_SAME_AS_HOST(TILE);
FLASHLAB_SAME_AS_HOST(SOFTMAX_THREADS);

// Offset of row i of head (b, h) in the fp32 score matrix. 64-bit: B·H·Sq·Sk passes 2^31
// at 16 heads and seqlen 11586.
__device__ __forceinline__ long long score_row(const AttnParams& p, int b, int h, int i) {
    return ((static_cast<long long>(b) * p.heads + h) * p.seqlen_q + i) * p.seqlen_k;
}

// ANCHOR: scores
// S[b, h, i, j] = scale * dot(Q[b, i, h, :], K[b, j, kv_head(h), :]), or -inf if masked.
template <typename T, int D>
__device__ void naive_scores(const AttnParams& p) {
    const int j = blockIdx.x * TILE + threadIdx.x;  // key
    const int i = blockIdx.y * TILE + threadIdx.y;  // query
    const int b = blockIdx.z / p.heads, h = blockIdx.z % p.heads;
    if (i >= p.seqlen_q || j >= p.seqlen_k) return;
    float s = -CUDART_INF_F;
    if (!p.causal || j < causal_key_end(p, i)) {
        const T* q = static_cast<const T*>(p.q) + q_row_offset(p, b, i, h);
        const T* k = static_cast<const T*>(p.k) + kv_row_offset(p, b, j, kv_head_of(p, h));
        float dot = 0.f;
#pragma unroll 8
        for (int d = 0; d < D; ++d) dot += to_float(q[d]) * to_float(k[d]);
        s = dot * p.scale;
    }
    p.scratch[score_row(p, b, h, i) + j] = s;
}
// ANCHOR_END: scores

// ANCHOR: softmax
// Softmax of one row of S, in place, and its log-sum-exp. Three passes over the row:
// the max (so exp never overflows), the sum of exponentials, then the normalization.
template <typename T, int D>
__device__ void naive_softmax(const AttnParams& p) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y / p.heads, h = blockIdx.y % p.heads;
    if (i >= p.seqlen_q) return;
    float* row = p.scratch + score_row(p, b, h, i);
    float max = -CUDART_INF_F;
    for (int j = 0; j < p.seqlen_k; ++j) max = fmaxf(max, row[j]);
    // A fully masked row (causal, seqlen_q > seqlen_k) has max = -inf: exp(-inf - -inf)
    // would be NaN, so it gets P = 0, O = 0 and LSE = -inf instead.
    const float base = max == -CUDART_INF_F ? 0.f : max;
    float sum = 0.f;
    for (int j = 0; j < p.seqlen_k; ++j) sum += expf(row[j] - base);
    const float inv_sum = sum > 0.f ? 1.f / sum : 0.f;
    for (int j = 0; j < p.seqlen_k; ++j) row[j] = expf(row[j] - base) * inv_sum;
    p.lse[lse_index(p, b, h, i)] = sum > 0.f ? base + logf(sum) : -CUDART_INF_F;
}
// ANCHOR_END: softmax

// ANCHOR: output
// O[b, i, h, d] = sum_j P[b, h, i, j] * V[b, j, kv_head(h), d], accumulated in fp32.
template <typename T, int D>
__device__ void naive_output(const AttnParams& p) {
    const int d = blockIdx.x * TILE + threadIdx.x;
    const int i = blockIdx.y * TILE + threadIdx.y;
    const int b = blockIdx.z / p.heads, h = blockIdx.z % p.heads;
    if (i >= p.seqlen_q || d >= D) return;
    const float* prob = p.scratch + score_row(p, b, h, i);
    const T* v = static_cast<const T*>(p.v) + kv_row_offset(p, b, 0, kv_head_of(p, h)) + d;
    const long long v_stride = static_cast<long long>(p.kv_heads) * D;  // next key, same head
    float acc = 0.f;
    for (int j = 0; j < p.seqlen_k; ++j) acc += prob[j] * to_float(v[j * v_stride]);
    static_cast<T*>(p.o)[q_row_offset(p, b, i, h) + d] = from_float<T>(acc);
}
// ANCHOR_END: output

}  // namespace flashlab

using flashlab::naive_output;
using flashlab::naive_scores;
using flashlab::naive_softmax;
FLASHLAB_EXPORT_ALL(naive_scores, naive_scores, flashlab::TILE * flashlab::TILE)
FLASHLAB_EXPORT_ALL(naive_softmax, naive_softmax, flashlab::SOFTMAX_THREADS)
FLASHLAB_EXPORT_ALL(naive_output, naive_output, flashlab::TILE * flashlab::TILE)
