// Stage 2, fused attention with online softmax on CUDA cores: one kernel, S never leaves
// the chip. Each block owns BR = 64 query rows; K and V tiles of BC = 64 keys stream
// through shared memory, and each row keeps a running max m, a running sum l and an
// unnormalized O in registers, rescaled whenever m grows (book: "Online softmax").
//
//   block: 256 threads = 64 row groups of 4 threads ("a quad" per query row)
//   smem:  q_smem [BR][D] T | kv_smem [BC][D] T (K, then V over it) | s_smem [BR][BC] f32
//          48 KiB at D = 128. Plain row-major: stage 4 removes the bank conflicts this pays.
#include <flashlab/common.cuh>

namespace flashlab {

// ANCHOR: tiles
constexpr int BR = 64;             // query rows per block
constexpr int BC = 64;             // keys per K/V tile
constexpr int THREADS_PER_ROW = 4; // a row group: 4 adjacent lanes of one warp
constexpr int THREADS = BR * THREADS_PER_ROW;
FLASHLAB_SAME_AS_HOST(BR);
FLASHLAB_SAME_AS_HOST(BC);
FLASHLAB_SAME_AS_HOST(THREADS);
// ANCHOR_END: tiles

// Copies `rows` rows of D elements (global row r at base + r * row_stride) into a dense
// [BR or BC][D] shared tile with 16-byte vectors; rows past `valid_rows` become zeros so
// the tail tile needs no special case in the math (its scores are masked anyway).
template <typename T, int D>
__device__ __forceinline__ void load_tile(T* tile_smem, const T* base, long long row_stride, int rows, int valid_rows) {
    constexpr int VEC = 16 / sizeof(T);  // 8 elements per 16-byte load
    constexpr int VECS_PER_ROW = D / VEC;
    for (int idx = threadIdx.x; idx < rows * VECS_PER_ROW; idx += THREADS) {
        const int r = idx / VECS_PER_ROW, c = (idx % VECS_PER_ROW) * VEC;
        uint4 chunk = make_uint4(0, 0, 0, 0);
        if (r < valid_rows) chunk = *reinterpret_cast<const uint4*>(base + r * row_stride + c);
        *reinterpret_cast<uint4*>(tile_smem + r * D + c) = chunk;
    }
}

template <typename T, int D>
__device__ void online_softmax(const AttnParams& p) {
    // ANCHOR: smem
    extern __shared__ __align__(16) unsigned char smem[];
    T* q_smem = reinterpret_cast<T*>(smem);                 // [BR][D]
    T* kv_smem = q_smem + BR * D;                           // [BC][D]
    float* s_smem = reinterpret_cast<float*>(kv_smem + BC * D);  // [BR][BC]
    // ANCHOR_END: smem

    const int q_start = blockIdx.x * BR;
    const int h = blockIdx.y, b = blockIdx.z, kv_head = kv_head_of(p, h);
    const int row = threadIdx.x / THREADS_PER_ROW;  // this group's query row in the tile
    const int part = threadIdx.x % THREADS_PER_ROW; // which quarter of the row this thread owns
    const int i = q_start + row;                    // global query index
    const long long q_stride = static_cast<long long>(p.heads) * D;
    const long long kv_stride = static_cast<long long>(p.kv_heads) * D;

    load_tile<T, D>(q_smem, static_cast<const T*>(p.q) + q_row_offset(p, b, q_start, h), q_stride, BR,
                    min(BR, p.seqlen_q - q_start));

    // ANCHOR: state
    // Running state of row i, in the log2 domain: scores are pre-multiplied by
    // scale * log2(e) so that exp(x) becomes exp2, a single MUFU instruction.
    float m = -CUDART_INF_F;  // running max of scaled scores
    float l = 0.f;            // running sum of exp2(score - m)
    // This thread's quarter of O's row: columns 2*part + 8*c + {0, 1}, so the 4 threads
    // of a group read 4 adjacent 32-bit words of a V row.
    float o_acc[D / 4];
#pragma unroll
    for (int c = 0; c < D / 4; ++c) o_acc[c] = 0.f;
    // ANCHOR_END: state

    // ANCHOR: kv_loop
    // Causal: keys past the last visible one of the tile's last row are never needed.
    int kv_end = p.seqlen_k;
    if (p.causal) kv_end = max(0, min(p.seqlen_k, causal_key_end(p, min(q_start + BR, p.seqlen_q) - 1)));

    for (int kv_start = 0; kv_start < kv_end; kv_start += BC) {
        const int kv_valid = min(BC, p.seqlen_k - kv_start);
        __syncthreads();  // the previous tile's V reads are done with kv_smem
        load_tile<T, D>(kv_smem, static_cast<const T*>(p.k) + kv_row_offset(p, b, kv_start, kv_head), kv_stride, BC, kv_valid);
        __syncthreads();
        // ANCHOR_END: kv_loop

        // ANCHOR: scores
        // S = Q K^T for this row: the thread computes keys part, part + 4, ... (BC / 4 of them).
        float s[BC / THREADS_PER_ROW];
#pragma unroll
        for (int t = 0; t < BC / THREADS_PER_ROW; ++t) s[t] = 0.f;
        for (int d = 0; d < D; ++d) {
            const float q = to_float(q_smem[row * D + d]);
#pragma unroll
            for (int t = 0; t < BC / THREADS_PER_ROW; ++t)
                s[t] += q * to_float(kv_smem[(part + THREADS_PER_ROW * t) * D + d]);
        }
        // ANCHOR_END: scores

        // ANCHOR: rescale
        // Scale into the log2 domain and mask: keys past seqlen_k, and causal.
        float tile_max = -CUDART_INF_F;
#pragma unroll
        for (int t = 0; t < BC / THREADS_PER_ROW; ++t) {
            const int j = kv_start + part + THREADS_PER_ROW * t;
            const bool visible = j < p.seqlen_k && (!p.causal || j < causal_key_end(p, i));
            s[t] = visible ? s[t] * p.scale_log2 : -CUDART_INF_F;
            tile_max = fmaxf(tile_max, s[t]);
        }
        const float m_new = fmaxf(m, quad_max(tile_max));
        // Guard: while every key so far is masked, m_new is -inf and -inf - -inf is NaN.
        // Subtracting 0 instead gives exp2(-inf) = 0 for the masked scores, as it should.
        const float m_base = m_new == -CUDART_INF_F ? 0.f : m_new;
        const float rescale = exp2f(m - m_base);  // how much the old state shrinks

        float tile_sum = 0.f;
#pragma unroll
        for (int t = 0; t < BC / THREADS_PER_ROW; ++t) {
            const float prob = exp2f(s[t] - m_base);
            tile_sum += prob;
            s_smem[row * BC + part + THREADS_PER_ROW * t] = prob;  // P over S, in place
        }
        l = l * rescale + quad_sum(tile_sum);
        m = m_new;
#pragma unroll
        for (int c = 0; c < D / 4; ++c) o_acc[c] *= rescale;
        // ANCHOR_END: rescale

        // ANCHOR: pv
        // K is finished once P exists: V takes its place in kv_smem.
        __syncthreads();
        load_tile<T, D>(kv_smem, static_cast<const T*>(p.v) + kv_row_offset(p, b, kv_start, kv_head), kv_stride, BC, kv_valid);
        __syncthreads();

        // O += P V over this tile's keys.
        for (int j = 0; j < BC; ++j) {
            const float prob = s_smem[row * BC + j];
#pragma unroll
            for (int c = 0; c < D / 8; ++c) {
                const int col = 2 * part + 8 * c;
                o_acc[2 * c] += prob * to_float(kv_smem[j * D + col]);
                o_acc[2 * c + 1] += prob * to_float(kv_smem[j * D + col + 1]);
            }
        }
        // ANCHOR_END: pv
    }

    // ANCHOR: finalize
    if (i >= p.seqlen_q) return;
    // Finalize: O /= l. A fully masked row has l = 0 and O = 0; dividing by 1 keeps it 0.
    const float inv_l = l > 0.f ? 1.f / l : 1.f;
    T* o = static_cast<T*>(p.o) + q_row_offset(p, b, i, h);
#pragma unroll
    for (int c = 0; c < D / 8; ++c) {
        const int col = 2 * part + 8 * c;
        o[col] = from_float<T>(o_acc[2 * c] * inv_l);
        o[col + 1] = from_float<T>(o_acc[2 * c + 1] * inv_l);
    }
    if (part == 0) {
        // LSE in natural log: (m + log2 l) is log2 of sum exp(scale * s), times ln 2.
        p.lse[lse_index(p, b, h, i)] =
            l > 0.f ? (m + log2f(l)) * CUDART_LN2_F : -CUDART_INF_F;
    }
    // ANCHOR_END: finalize
}

}  // namespace flashlab

using flashlab::online_softmax;
FLASHLAB_EXPORT_ALL(online_softmax, online_softmax, flashlab::THREADS)
