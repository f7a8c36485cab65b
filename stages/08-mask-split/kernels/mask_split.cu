// Stage 8, masked tiles apart: stage 7 with the tile's code compiled twice, once with the
// mask and once without. In stage 7 the mask test sits inside the tile's loops; even when
// it is false it cuts the code into small basic blocks, and ptxas schedules within a block.
// Here the unmasked copy, which almost every tile takes, is one block of straight-line
// code: ptxas interleaves one m16 tile's softmax with the other's and with the products
// around them. FlashAttention-2 runs its masking iterations apart from the others too.
// Book: "Stage 8: masked tiles apart".
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>
#include <flashlab/tile_copy.cuh>

namespace flashlab {

// ANCHOR: tiles
constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int MT = 2;  // m16 row tiles per warp: 32 query rows each
constexpr int BLOCK_Q = WARPS * 16 * MT;
constexpr int BLOCK_KV = 64;
constexpr int NSTAGES = 2;  // ring depth: K/V tiles resident at once
// ANCHOR_END: tiles
static_assert(NSTAGES >= 2, "a ring of one slot cannot overlap loads with compute");
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(BLOCK_Q);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);

template <int D>
__device__ __forceinline__ int tile_offset(int row, int col) { return tile_offset_swizzled<D>(row, col); }

template <typename T, int D>
__device__ void mask_split_attention(const AttnParams& p) {
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

    // Two commit groups per tile, K then V. Groups are committed even when empty, so the
    // number of groups after tile t's K (or V) is the same in every iteration.
    auto issue_kv = [&](int tile) {
        const int slot = tile % NSTAGES, kv_start = tile * BLOCK_KV, valid = p.seqlen_k - kv_start;
        if (tile < n_tiles) load_tile_async<T, D, BLOCK_KV, THREADS>(k_smem + slot * BLOCK_KV * D, k_gmem + kv_start * kv_stride, kv_stride, valid);
        cp_async_commit();
        if (tile < n_tiles) load_tile_async<T, D, BLOCK_KV, THREADS>(v_smem + slot * BLOCK_KV * D, v_gmem + kv_start * kv_stride, kv_stride, valid);
        cp_async_commit();
    };

    // Prologue: Q (in tile 0's K group) and the first NSTAGES - 1 tiles.
    load_tile_async<T, D, BLOCK_Q, THREADS>(q_smem, static_cast<const T*>(p.q) + q_row_offset(p, b, q_start, h), q_stride,
                                   p.seqlen_q - q_start);
#pragma unroll
    for (int s = 0; s < NSTAGES - 1; ++s) issue_kv(s);

    // Per lane and m16 tile m: rows g and g + 8 of the tile, so [MT][2] of each row state.
    float o_rmem[MT][D / 8][4] = {};
    float row_max[MT][2], row_sum[MT][2];  // row_max in scaled log2 units; row_sum per lane
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            row_max[m][r] = -CUDART_INF_F;
            row_sum[m][r] = 0.f;
        }
    // The query row of this lane's row r of m16 tile m, computed where it is needed (the
    // mask and the epilogue) rather than kept in registers across the loop.
    auto q_row = [&](int m, int r) { return q_start + (warp * MT + m) * 16 + quad_group(lane) + 8 * r; };
    // ANCHOR: q_frag
    // Where lane's ldmatrix.x4 address for Q's A fragment (m16 tile m, k-step kk) points:
    // stepped from the lane's first address like K's and V's.
    const int q_off0 = tile_offset<D>(warp * MT * 16 + lane % 16, (lane / 16) * 8);
    auto q_frag_addr = [&](int m, int kk) {
        return smem_addr(q_smem + swizzled_step_cols(swizzled_step_rows<D>(q_off0, 2 * m), kk));
    };
    // ANCHOR_END: q_frag
    const int k_off0 = tile_offset<D>((lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8);
    const int v_off0 = tile_offset<D>(((lane / 8) % 2) * 8 + lane % 8, (lane / 16) * 8);

    // ANCHOR: qk
    // S = Q K^T. Each K fragment of an ldmatrix.x4 now feeds both m16 tiles of the warp.
    float s_rmem[MT][BLOCK_KV / 8][4];
    uint32_t p_rmem[MT][BLOCK_KV / 16][4];
    auto qk = [&](const T* k_tile) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int n = 0; n < BLOCK_KV / 8; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) s_rmem[m][n][e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t q_frag[MT][4];
#pragma unroll
            for (int m = 0; m < MT; ++m) ldmatrix_x4(q_frag[m], q_frag_addr(m, kk));
#pragma unroll
            for (int n = 0; n < BLOCK_KV / 8; n += 2) {
                uint32_t kb[4];
                ldmatrix_x4(kb, smem_addr(k_tile + swizzled_step_rows<D>(swizzled_step_cols(k_off0, kk), n)));
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    mma_m16n8k16<T>(s_rmem[m][n], q_frag[m], kb[0], kb[1]);
                    mma_m16n8k16<T>(s_rmem[m][n + 1], q_frag[m], kb[2], kb[3]);
                }
            }
        }
    };
    // ANCHOR_END: qk

    // ANCHOR: softmax
    // The online softmax of m16 tile M, the mask compiled in only where MASKED says so.
    auto softmax = [&](auto M, auto MASKED, int kv_start) {
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
        float m_base[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float m_new = fmaxf(row_max[m][r], quad_max(tile_max[r]) * p.scale_log2);
            m_base[r] = m_new == -CUDART_INF_F ? 0.f : m_new;  // fully masked so far: avoid -inf - -inf
            const float rescale = fast_exp2(row_max[m][r] - m_base[r]);
            row_max[m][r] = m_new;
            row_sum[m][r] *= rescale;
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {
                o_rmem[m][n][2 * r] *= rescale;
                o_rmem[m][n][2 * r + 1] *= rescale;
            }
        }
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
            float prob[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                prob[e] = fast_exp2(fmaf(s_rmem[m][n][e], p.scale_log2, -m_base[e / 2]));
                row_sum[m][e / 2] += prob[e];
            }
            p_rmem[m][n / 2][(n % 2) * 2 + 0] = pack2<T>(prob[0], prob[1]);
            p_rmem[m][n / 2][(n % 2) * 2 + 1] = pack2<T>(prob[2], prob[3]);
        }
    };
    // ANCHOR_END: softmax

    // O += P V: each V fragment feeds both m16 tiles.
    auto pv = [&](const T* v_tile) {
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
#pragma unroll
            for (int n = 0; n < D / 8; n += 2) {
                uint32_t vb[4];
                ldmatrix_x4_trans(vb, smem_addr(v_tile + swizzled_step_rows<D>(swizzled_step_cols(v_off0, n / 2), 2 * kk)));
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    mma_m16n8k16<T>(o_rmem[m][n], p_rmem[m][kk], vb[0], vb[1]);
                    mma_m16n8k16<T>(o_rmem[m][n + 1], p_rmem[m][kk], vb[2], vb[3]);
                }
            }
        }
    };


    for (int t = 0; t < n_tiles; ++t) {
        // Refill the slot freed at the end of the previous iteration, then wait for tile
        // t's K: after it come V_t and the 2 (NSTAGES - 1) groups of the tiles ahead.
        issue_kv(t + NSTAGES - 1);
        cp_async_wait<2 * NSTAGES - 1>();
        __syncthreads();
        const int kv_start = t * BLOCK_KV;
        const T* k_smem_t = k_smem + (t % NSTAGES) * BLOCK_KV * D;  // this tile's slot
        const T* v_smem_t = v_smem + (t % NSTAGES) * BLOCK_KV * D;

        // ANCHOR: order
        // Masked and unmasked tiles run separate copies of the code, so the common,
        // unmasked one is straight-line code the compiler can schedule as a whole: the
        // softmax of one m16 tile overlaps the other's.
        auto tile = [&](auto MASKED) {
            qk(k_smem_t);
            softmax(Int<0>{}, MASKED, kv_start);
            softmax(Int<1>{}, MASKED, kv_start);
        };
        if (tile_needs_mask(p, kv_start, BLOCK_KV, q_start))
            tile(Int<1>{});
        else
            tile(Int<0>{});
        // ANCHOR_END: order

        cp_async_wait<2 * (NSTAGES - 1)>();  // now V_t too
        __syncthreads();
        pv(v_smem_t);
        __syncthreads();  // every warp is done with this slot before it is refilled
    }
    cp_async_wait<0>();  // no copy may still be landing when the block exits (no tiles: Q's)

    // Finalize: add the quad's partial sums, divide, write O and the LSE.
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float sum = quad_sum(row_sum[m][r]);
            if (q_row(m, r) >= p.seqlen_q) continue;
            const float inv_sum = sum > 0.f ? 1.f / sum : 1.f;  // fully masked: O stays 0
            T* o = static_cast<T*>(p.o) + q_row_offset(p, b, q_row(m, r), h);
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {
                const int col = n * 8 + mma_m16n8_c(lane, 0).col;
                *reinterpret_cast<uint32_t*>(o + col) = pack2<T>(o_rmem[m][n][2 * r] * inv_sum, o_rmem[m][n][2 * r + 1] * inv_sum);
            }
            if (quad_lane(lane) == 0)
                p.lse[lse_index(p, b, h, q_row(m, r))] = sum > 0.f ? (row_max[m][r] + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
        }
    }
}

}  // namespace flashlab

using flashlab::mask_split_attention;
FLASHLAB_EXPORT_ALL(mask_split, mask_split_attention, flashlab::THREADS)
