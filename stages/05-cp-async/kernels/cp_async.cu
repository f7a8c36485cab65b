// Stage 5, cp.async pipelining: stage 4 with the loads moved off the critical path. In
// stage 4 every warp waits while a K/V tile travels from global memory through registers
// into shared memory. Here the tiles arrive by cp.async (global to shared memory, no
// registers, no waiting at the copy) into a ring of NSTAGES slots: while the warps compute
// on tile t, the copies of tiles t+1 .. t+NSTAGES-1 are in flight. K and V of a tile are
// separate commit groups, so S = QK^T and the softmax start as soon as K has landed while V
// may still be on its way. Everything else is stage 4.
// Book: "Stage 5: cp.async pipelining".
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>

namespace flashlab {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int BLOCK_Q = WARPS * 16;  // one m16 row block per warp
constexpr int BLOCK_KV = 64;
constexpr int NSTAGES = 2;  // ring depth: K/V tiles resident at once
static_assert(NSTAGES >= 2, "a ring of one slot cannot overlap loads with compute");
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(BLOCK_Q);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);

template <int D>
__device__ __forceinline__ int tile_offset(int row, int col) { return tile_offset_swizzled<D>(row, col); }

// ANCHOR: load_tile_async
// Stage 4's load_tile, queued instead of done: each 16-byte chunk is one cp.async straight
// into the swizzled tile. A row past `valid` reads nothing (src-size 0) and is zero-filled
// by the copy itself; its source address only has to be a valid one.
template <typename T, int D, int ROWS>
__device__ __forceinline__ void load_tile_async(T* tile_smem, const T* gmem, long long stride, int valid) {
    constexpr int CHUNKS = D / 8;  // 16-byte chunks per row
    for (int idx = threadIdx.x; idx < ROWS * CHUNKS; idx += THREADS) {
        const int r = idx / CHUNKS, c = (idx % CHUNKS) * 8;
        cp_async_16(smem_addr(tile_smem + tile_offset<D>(r, c)), r < valid ? gmem + r * stride + c : gmem, r < valid);
    }
}
// ANCHOR_END: load_tile_async

template <typename T, int D>
__device__ void pipelined_attention(const AttnParams& p) {
    extern __shared__ __align__(128) unsigned char smem[];
    T* q_smem = reinterpret_cast<T*>(smem);       // [BLOCK_Q][D]
    T* k_smem = q_smem + BLOCK_Q * D;             // [NSTAGES][BLOCK_KV][D]
    T* v_smem = k_smem + NSTAGES * BLOCK_KV * D;  // [NSTAGES][BLOCK_KV][D]

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q_start = blockIdx.x * BLOCK_Q;
    const int h = blockIdx.y, b = blockIdx.z, kv_head = kv_head_of(p, h);
    const long long q_stride = static_cast<long long>(p.heads) * D;
    const long long kv_stride = static_cast<long long>(p.kv_heads) * D;
    const T* k_gmem = static_cast<const T*>(p.k) + kv_row_offset(p, b, 0, kv_head);
    const T* v_gmem = static_cast<const T*>(p.v) + kv_row_offset(p, b, 0, kv_head);

    int kv_end = p.seqlen_k;
    if (p.causal) kv_end = max(0, min(p.seqlen_k, causal_key_end(p, min(q_start + BLOCK_Q, p.seqlen_q) - 1)));
    const int n_tiles = ceil_div(kv_end, BLOCK_KV);

    // ANCHOR: issue_kv
    // Two commit groups per tile, K then V. Groups are committed even when empty, so the
    // number of groups after tile t's K (or V) is the same in every iteration.
    auto issue_kv = [&](int tile) {
        const int slot = tile % NSTAGES, kv_start = tile * BLOCK_KV, valid = p.seqlen_k - kv_start;
        if (tile < n_tiles) load_tile_async<T, D, BLOCK_KV>(k_smem + slot * BLOCK_KV * D, k_gmem + kv_start * kv_stride, kv_stride, valid);
        cp_async_commit();
        if (tile < n_tiles) load_tile_async<T, D, BLOCK_KV>(v_smem + slot * BLOCK_KV * D, v_gmem + kv_start * kv_stride, kv_stride, valid);
        cp_async_commit();
    };
    // ANCHOR_END: issue_kv

    // ANCHOR: prologue
    // Prologue: Q (in tile 0's K group) and the first NSTAGES - 1 tiles.
    load_tile_async<T, D, BLOCK_Q>(q_smem, static_cast<const T*>(p.q) + q_row_offset(p, b, q_start, h), q_stride,
                                   p.seqlen_q - q_start);
#pragma unroll
    for (int s = 0; s < NSTAGES - 1; ++s) issue_kv(s);
    // ANCHOR_END: prologue

    // Q_rmem: this warp's 16 rows as D/16 A fragments, loaded once Q has landed (t = 0).
    uint32_t q_rmem[D / 16][4];

    // Per lane: rows g and g + 8 of the warp's block (g = lane / 4), so two of everything.
    float o_rmem[D / 8][4] = {};  // O accumulator: D/8 C fragments of 16x8
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
    float row_sum[2] = {0.f, 0.f};  // this lane's partial sums; the quad adds them up at the end
    const int row_in_block = warp * 16 + quad_group(lane);
    const int q_row[2] = {q_start + row_in_block, q_start + row_in_block + 8};

    // ANCHOR: wait_k
    for (int t = 0; t < n_tiles; ++t) {
        // Refill the slot freed at the end of the previous iteration, then wait for tile
        // t's K: after it come V_t and the 2 (NSTAGES - 1) groups of the tiles ahead.
        issue_kv(t + NSTAGES - 1);
        cp_async_wait<2 * NSTAGES - 1>();
        __syncthreads();
        // ANCHOR_END: wait_k
        if (t == 0) {
            // ldmatrix.x4 lane l gives the address of row l % 16, column block l / 16.
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk)
                ldmatrix_x4(q_rmem[kk], smem_addr(q_smem + tile_offset<D>(warp * 16 + lane % 16, kk * 16 + (lane / 16) * 8)));
        }
        const int kv_start = t * BLOCK_KV;
        const T* k_smem_t = k_smem + (t % NSTAGES) * BLOCK_KV * D;  // this tile's slot
        const T* v_smem_t = v_smem + (t % NSTAGES) * BLOCK_KV * D;

        // S = Q K^T: BLOCK_KV/8 C fragments of 16x8. For the B fragment of keys n..n+7 and
        // dims k..k+15, ldmatrix.x2 lanes 0-7 address dims k..k+7 and lanes 8-15 dims k+8.
        float s_rmem[BLOCK_KV / 8][4] = {};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                uint32_t b0, b1;
                ldmatrix_x2(b0, b1, smem_addr(k_smem_t + tile_offset<D>(n * 8 + lane % 8, kk * 16 + ((lane / 8) % 2) * 8)));
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

        // ANCHOR: wait_v
        cp_async_wait<2 * (NSTAGES - 1)>();  // now V_t too
        __syncthreads();
        // ANCHOR_END: wait_v

        // O += P V. B fragment of keys 16kk.. and dims n..n+7: ldmatrix.x2.trans, lanes
        // 0-7 address keys 16kk..16kk+7, lanes 8-15 keys 16kk+8..16kk+15, at dim n.
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
#pragma unroll
            for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
                uint32_t b0, b1;
                ldmatrix_x2_trans(b0, b1, smem_addr(v_smem_t + tile_offset<D>(kk * 16 + lane % 16, n * 8)));
                mma_m16n8k16<T>(o_rmem[n], p_rmem[kk], b0, b1);
            }
        }
        __syncthreads();  // every warp is done with this slot before it is refilled
    }
    cp_async_wait<0>();  // no copy may still be landing when the block exits (no tiles: Q's)

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

using flashlab::pipelined_attention;
FLASHLAB_EXPORT_ALL(cp_async, pipelined_attention, flashlab::THREADS)
