// Stage 4, swizzled shared memory: stage 3 with one change, the address of (row, col) in
// a shared tile. Stage 3's row-major tiles put the 8 rows an ldmatrix phase reads in the
// same 4 banks (8-way conflicts); XOR-ing each row's 16-byte chunk index with the row
// index spreads them over all 32. Everything else is stage 3.
//
//   block: 4 warps; warp w owns query rows 16w..16w+15 of the BLOCK_Q = 64 row tile
//   Q:  loaded once, then kept in registers as mma A fragments for the whole loop
//   K:  ldmatrix (K rows are B's columns: [key][dim] row-major is B "col")
//   V:  ldmatrix.trans (V rows are B's rows, so each 8x8 matrix is read transposed)
//   S -> P: rescaled and converted to bf16/f16 in registers; the C fragment of S *is* the
//           A fragment of P V, so P never touches shared memory
//   row max and sum: across the 4 lanes of a quad (they share a row of C) with shuffles
//
// Shared memory is swizzled (tile_offset_swizzled, smem_tile.cuh): ldmatrix reads and the
// 16-byte global-to-shared stores are free of bank conflicts by construction.
// Book: "Stage 4: swizzled shared memory".
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>

namespace flashlab {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int BLOCK_Q = WARPS * 16;  // one m16 row block per warp
constexpr int BLOCK_KV = 64;
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(BLOCK_Q);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);

// ANCHOR: tile_offset
// The one line that differs from stage 3: where (row, col) of a tile lives in shared memory.
template <int D>
__device__ __forceinline__ int tile_offset(int row, int col) { return tile_offset_swizzled<D>(row, col); }
// ANCHOR_END: tile_offset

// Global rows [row0, row0 + ROWS) of a BSHD tensor (row stride `stride`) into a tile,
// 16 bytes per thread per step; rows past `valid` are zero-filled.
template <typename T, int D, int ROWS>
__device__ __forceinline__ void load_tile(T* tile_smem, const T* gmem, long long stride, int valid) {
    constexpr int CHUNKS = D / 8;  // 16-byte chunks per row
    for (int idx = threadIdx.x; idx < ROWS * CHUNKS; idx += THREADS) {
        const int r = idx / CHUNKS, c = (idx % CHUNKS) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < valid) v = *reinterpret_cast<const uint4*>(gmem + r * stride + c);
        *reinterpret_cast<uint4*>(tile_smem + tile_offset<D>(r, c)) = v;
    }
}

template <typename T, int D>
__device__ void swizzled_attention(const AttnParams& p) {
    extern __shared__ __align__(128) unsigned char smem[];
    T* q_smem = reinterpret_cast<T*>(smem);  // [BLOCK_Q][D]
    T* k_smem = q_smem + BLOCK_Q * D;        // [BLOCK_KV][D]
    T* v_smem = k_smem + BLOCK_KV * D;       // [BLOCK_KV][D]

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q_start = blockIdx.x * BLOCK_Q;
    const int h = blockIdx.y, b = blockIdx.z, kv_head = kv_head_of(p, h);
    const long long q_stride = static_cast<long long>(p.heads) * D;
    const long long kv_stride = static_cast<long long>(p.kv_heads) * D;
    const T* k_gmem = static_cast<const T*>(p.k) + kv_row_offset(p, b, 0, kv_head);
    const T* v_gmem = static_cast<const T*>(p.v) + kv_row_offset(p, b, 0, kv_head);

    load_tile<T, D, BLOCK_Q>(q_smem, static_cast<const T*>(p.q) + q_row_offset(p, b, q_start, h), q_stride,
                             p.seqlen_q - q_start);
    __syncthreads();

    // Q_rmem: this warp's 16 rows as D/16 A fragments. ldmatrix.x4 lane l gives the
    // address of row l % 16, column block l / 16 (matrices: rows 0-7 | 8-15, cols 0-7 | 8-15).
    uint32_t q_rmem[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
        ldmatrix_x4(q_rmem[kk], smem_addr(q_smem + tile_offset<D>(warp * 16 + lane % 16, kk * 16 + (lane / 16) * 8)));

    // Per lane: rows g and g + 8 of the warp's block (g = lane / 4), so two of everything.
    float o_rmem[D / 8][4] = {};  // O accumulator: D/8 C fragments of 16x8
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
    float row_sum[2] = {0.f, 0.f};  // this lane's partial sums; the quad adds them up at the end
    const int row_in_block = warp * 16 + quad_group(lane);
    const int q_row[2] = {q_start + row_in_block, q_start + row_in_block + 8};

    int kv_end = p.seqlen_k;
    if (p.causal) kv_end = max(0, min(p.seqlen_k, causal_key_end(p, min(q_start + BLOCK_Q, p.seqlen_q) - 1)));

    for (int kv_start = 0; kv_start < kv_end; kv_start += BLOCK_KV) {
        const int kv_valid = min(BLOCK_KV, p.seqlen_k - kv_start);
        __syncthreads();  // every warp is done with the previous K and V
        load_tile<T, D, BLOCK_KV>(k_smem, k_gmem + kv_start * kv_stride, kv_stride, kv_valid);
        load_tile<T, D, BLOCK_KV>(v_smem, v_gmem + kv_start * kv_stride, kv_stride, kv_valid);
        __syncthreads();

        // S = Q K^T: BLOCK_KV/8 C fragments of 16x8. For the B fragment of keys n..n+7 and
        // dims k..k+15, ldmatrix.x2 lanes 0-7 address dims k..k+7 and lanes 8-15 dims k+8.
        float s_rmem[BLOCK_KV / 8][4] = {};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                uint32_t b0, b1;
                ldmatrix_x2(b0, b1, smem_addr(k_smem + tile_offset<D>(n * 8 + lane % 8, kk * 16 + ((lane / 8) % 2) * 8)));
                mma_m16n8k16<T>(s_rmem[n], q_rmem[kk], b0, b1);
            }
        }

        // Masking costs instructions, so only tiles that cross the sequence end or the
        // causal diagonal pay for it; all others are fully visible.
        const bool needs_mask = tile_needs_mask(p, kv_start, BLOCK_KV, q_start);
        float tile_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = e / 2;  // c0, c1 are row g; c2, c3 row g + 8
                float s = s_rmem[n][e] * p.scale_log2;
                if (needs_mask) {
                    const int j = kv_start + mma_m16n8_c(lane, e).col + n * 8;
                    if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, q_row[r]))) s = -CUDART_INF_F;
                }
                s_rmem[n][e] = s;
                tile_max[r] = fmaxf(tile_max[r], s);
            }
        }

        float rescale[2], m_base[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            // The quad's four lanes hold the row's 4 column pairs of each fragment.
            const float m_new = fmaxf(row_max[r], quad_max(tile_max[r]));
            m_base[r] = m_new == -CUDART_INF_F ? 0.f : m_new;  // fully masked so far: avoid -inf - -inf
            rescale[r] = exp2f(row_max[r] - m_base[r]);
            row_max[r] = m_new;
            row_sum[r] *= rescale[r];
        }
#pragma unroll
        for (int n = 0; n < D / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) o_rmem[n][e] *= rescale[e / 2];

        // P = exp2(S - m), packed straight into A fragments of P V: the k-step over keys
        // 16kk..16kk+15 takes S fragments 2kk (a0-a3) and 2kk+1 (a4-a7).
        uint32_t p_rmem[BLOCK_KV / 16][4];
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
            float prob[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                prob[e] = exp2f(s_rmem[n][e] - m_base[e / 2]);
                row_sum[e / 2] += prob[e];
            }
            p_rmem[n / 2][(n % 2) * 2 + 0] = pack2<T>(prob[0], prob[1]);
            p_rmem[n / 2][(n % 2) * 2 + 1] = pack2<T>(prob[2], prob[3]);
        }

        // O += P V. B fragment of keys 16kk.. and dims n..n+7: ldmatrix.x2.trans, lanes
        // 0-7 address keys 16kk..16kk+7, lanes 8-15 keys 16kk+8..16kk+15, at dim n.
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
#pragma unroll
            for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
                uint32_t b0, b1;
                ldmatrix_x2_trans(b0, b1, smem_addr(v_smem + tile_offset<D>(kk * 16 + lane % 16, n * 8)));
                mma_m16n8k16<T>(o_rmem[n], p_rmem[kk], b0, b1);
            }
        }
    }

    // Finalize: add the quad's partial sums, divide, write O and the LSE.
#pragma unroll
    for (int r = 0; r < 2; ++r) row_sum[r] = quad_sum(row_sum[r]);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (q_row[r] >= p.seqlen_q) continue;
        const float inv_sum = row_sum[r] > 0.f ? 1.f / row_sum[r] : 1.f;  // fully masked: O stays 0
        T* o = static_cast<T*>(p.o) + q_row_offset(p, b, q_row[r], h);
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            const int col = n * 8 + mma_m16n8_c(lane, 0).col;
            *reinterpret_cast<uint32_t*>(o + col) = pack2<T>(o_rmem[n][2 * r] * inv_sum, o_rmem[n][2 * r + 1] * inv_sum);
        }
        if (quad_lane(lane) == 0)
            p.lse[lse_index(p, b, h, q_row[r])] =
                row_sum[r] > 0.f ? (row_max[r] + log2f(row_sum[r])) * CUDART_LN2_F : -CUDART_INF_F;
    }
}

}  // namespace flashlab

using flashlab::swizzled_attention;
FLASHLAB_EXPORT_ALL(swizzle, swizzled_attention, flashlab::THREADS)
