// Stage 5, pipelining: stage 4's swizzled tensor-core kernel, with the loads moved off the
// critical path. K and V tiles arrive through cp.async (global to shared memory without
// passing through registers) into a ring of NSTAGES slots, so while the warps compute on
// tile t the copies of tiles t+1 .. t+NSTAGES-1 are already in flight. K and V of a tile
// are separate commit groups: S = QK^T and the softmax start as soon as K has landed,
// while V may still be on its way. Also new:
//   - ldmatrix.x4 for K and V: one instruction feeds two mma's B fragments
//   - the softmax scale is folded into the exponent's FFMA: exp2(s * scale_log2 - m)
//   - the warp count and ring depth are template parameters; every variant is compiled
//     and `FLASHLAB_STAGE5=warps,stages` picks one at run time (src/lib.rs)
// Book: "Stage 5: cp.async pipelining".
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>

namespace flashlab {

// Tile configuration (mirrored in src/lib.rs). Shared memory per block is
// (BLOCK_Q + 2 * NSTAGES * BLOCK_KV) * D * 2 bytes, e.g. 80 KiB at D = 128, 4 warps, 2 stages.
template <int D, int WARPS_, int NSTAGES_>
struct Config {
    static constexpr int WARPS = WARPS_;
    static constexpr int THREADS = WARPS * 32;
    static constexpr int BLOCK_Q = WARPS * 16;  // one m16 row block per warp
    static constexpr int BLOCK_KV = 64;
    static constexpr int NSTAGES = NSTAGES_;  // ring depth: tiles in flight while one is computed
    static_assert(NSTAGES >= 2, "a ring of one slot cannot overlap loads with compute");
    static_assert(BLOCK_KV % 16 == 0 && D % 16 == 0, "mma.m16n8k16 steps");
};

template <int D>
__device__ __forceinline__ int tile_offset(int row, int col) { return tile_offset_swizzled<D>(row, col); }

// Queues the copy of ROWS global rows into a swizzled tile: one 16-byte cp.async per chunk.
// Rows past `valid` are zero-filled by the copy itself (src-size 0).
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile_async(T* tile_smem, const T* gmem, long long stride, int valid) {
    constexpr int CHUNKS = D / 8;
#pragma unroll
    for (int idx = threadIdx.x; idx < ROWS * CHUNKS; idx += THREADS) {
        const int r = idx / CHUNKS, c = (idx % CHUNKS) * 8;
        const bool in_range = r < valid;
        cp_async_16(smem_addr(tile_smem + tile_offset<D>(r, c)), gmem + (in_range ? r * stride + c : 0), in_range);
    }
}

template <typename T, int D, int WARPS, int NSTAGES_>
__device__ void cp_async_attention(const AttnParams& p) {
    using C = Config<D, WARPS, NSTAGES_>;
    constexpr int BLOCK_Q = C::BLOCK_Q, BLOCK_KV = C::BLOCK_KV, NSTAGES = C::NSTAGES, THREADS = C::THREADS;
    extern __shared__ __align__(128) unsigned char smem[];
    T* q_smem = reinterpret_cast<T*>(smem);           // [BLOCK_Q][D]
    T* k_smem = q_smem + BLOCK_Q * D;                 // [NSTAGES][BLOCK_KV][D]
    T* v_smem = k_smem + NSTAGES * BLOCK_KV * D;      // [NSTAGES][BLOCK_KV][D]

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
        if (tile < n_tiles)
            load_tile_async<T, D, BLOCK_KV, THREADS>(k_smem + slot * BLOCK_KV * D, k_gmem + kv_start * kv_stride, kv_stride, valid);
        cp_async_commit();
        if (tile < n_tiles)
            load_tile_async<T, D, BLOCK_KV, THREADS>(v_smem + slot * BLOCK_KV * D, v_gmem + kv_start * kv_stride, kv_stride, valid);
        cp_async_commit();
    };

    // Prologue: Q (in tile 0's K group) and the first NSTAGES - 1 tiles.
    load_tile_async<T, D, BLOCK_Q, THREADS>(q_smem, static_cast<const T*>(p.q) + q_row_offset(p, b, q_start, h), q_stride,
                                            p.seqlen_q - q_start);
#pragma unroll
    for (int s = 0; s < NSTAGES - 1; ++s) issue_kv(s);

    uint32_t q_rmem[D / 16][4];
    float o_rmem[D / 8][4] = {};
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};  // in scaled log2 units
    float row_sum[2] = {0.f, 0.f};
    const int row_in_block = warp * 16 + quad_group(lane);
    const int q_row[2] = {q_start + row_in_block, q_start + row_in_block + 8};

    for (int t = 0; t < n_tiles; ++t) {
        // Refill the slot freed at the end of the previous iteration, then wait for tile
        // t's K: after it come V_t and the 2 (NSTAGES - 1) groups of the tiles ahead.
        issue_kv(t + NSTAGES - 1);
        cp_async_wait<2 * NSTAGES - 1>();
        __syncthreads();

        if (t == 0) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk)
                ldmatrix_x4(q_rmem[kk], smem_addr(q_smem + tile_offset<D>(warp * 16 + lane % 16, kk * 16 + (lane / 16) * 8)));
        }
        const T* k_tile = k_smem + (t % NSTAGES) * BLOCK_KV * D;
        const T* v_tile = v_smem + (t % NSTAGES) * BLOCK_KV * D;
        const int kv_start = t * BLOCK_KV;

        // S = Q K^T. ldmatrix.x4: lanes 0-15 address keys n*8.. (dims kk*16 + 0 | 8),
        // lanes 16-31 keys (n+1)*8..: B fragments of two 8-key n-tiles at once.
        float s_rmem[BLOCK_KV / 8][4] = {};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; n += 2) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                uint32_t kb[4];
                ldmatrix_x4(kb, smem_addr(k_tile + tile_offset<D>(n * 8 + (lane / 16) * 8 + lane % 8, kk * 16 + ((lane / 8) % 2) * 8)));
                mma_m16n8k16<T>(s_rmem[n], q_rmem[kk], kb[0], kb[1]);
                mma_m16n8k16<T>(s_rmem[n + 1], q_rmem[kk], kb[2], kb[3]);
            }
        }

        const bool needs_mask = kv_start + BLOCK_KV > p.seqlen_k || (p.causal && kv_start + BLOCK_KV > causal_key_end(p, q_start));
        float tile_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (needs_mask) {
                    const int j = kv_start + n * 8 + mma_m16n8_c(lane, e).col;
                    if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, q_row[e / 2]))) s_rmem[n][e] = -CUDART_INF_F;
                }
                tile_max[e / 2] = fmaxf(tile_max[e / 2], s_rmem[n][e]);
            }
        }

        float m_base[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffff, tile_max[r], 1));
            tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffff, tile_max[r], 2));
            // The scale is positive, so max(s) * scale is the max of the scaled scores.
            const float m_new = fmaxf(row_max[r], tile_max[r] * p.scale_log2);
            m_base[r] = m_new == -CUDART_INF_F ? 0.f : m_new;
            const float rescale = exp2f(row_max[r] - m_base[r]);
            row_max[r] = m_new;
            row_sum[r] *= rescale;
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {
                o_rmem[n][2 * r] *= rescale;
                o_rmem[n][2 * r + 1] *= rescale;
            }
        }

        uint32_t p_rmem[BLOCK_KV / 16][4];
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
            float prob[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                prob[e] = exp2f(fmaf(s_rmem[n][e], p.scale_log2, -m_base[e / 2]));  // one FFMA + one MUFU
                row_sum[e / 2] += prob[e];
            }
            p_rmem[n / 2][(n % 2) * 2 + 0] = pack2<T>(prob[0], prob[1]);
            p_rmem[n / 2][(n % 2) * 2 + 1] = pack2<T>(prob[2], prob[3]);
        }

        cp_async_wait<2 * (NSTAGES - 1)>();  // now V_t too
        __syncthreads();

        // O += P V. ldmatrix.x4.trans: lanes 0-15 address keys kk*16.. at dims n*8, lanes
        // 16-31 the same keys at dims (n+1)*8: B fragments of two 8-dim n-tiles.
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
#pragma unroll
            for (int n = 0; n < D / 8; n += 2) {
                uint32_t vb[4];
                ldmatrix_x4_trans(vb, smem_addr(v_tile + tile_offset<D>(kk * 16 + ((lane / 8) % 2) * 8 + lane % 8, n * 8 + (lane / 16) * 8)));
                mma_m16n8k16<T>(o_rmem[n], p_rmem[kk], vb[0], vb[1]);
                mma_m16n8k16<T>(o_rmem[n + 1], p_rmem[kk], vb[2], vb[3]);
            }
        }
        __syncthreads();  // every warp is done with this slot before it is refilled
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        row_sum[r] += __shfl_xor_sync(0xffffffff, row_sum[r], 1);
        row_sum[r] += __shfl_xor_sync(0xffffffff, row_sum[r], 2);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (q_row[r] >= p.seqlen_q) continue;
        const float inv_sum = row_sum[r] > 0.f ? 1.f / row_sum[r] : 1.f;
        T* o = static_cast<T*>(p.o) + q_row_offset(p, b, q_row[r], h);
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            const int col = n * 8 + mma_m16n8_c(lane, 0).col;
            *reinterpret_cast<uint32_t*>(o + col) = pack2<T>(o_rmem[n][2 * r] * inv_sum, o_rmem[n][2 * r + 1] * inv_sum);
        }
        if (quad_lane(lane) == 0)
            p.lse[(static_cast<long long>(b) * p.heads + h) * p.seqlen_q + q_row[r]] =
                row_sum[r] > 0.f ? (row_max[r] + log2f(row_sum[r])) * CUDART_LN2_F : -CUDART_INF_F;
    }
}

}  // namespace flashlab

// Every (warps, stages) variant, exported as cp_async_w<W>s<S>_<dtype>_d<D>.
#define CP_ASYNC_VARIANT(W, S)                                                                     \
    template <typename T, int D>                                                                 \
    __device__ void cp_async_w##W##s##S(const flashlab::AttnParams& p) {                         \
        flashlab::cp_async_attention<T, D, W, S>(p);                                             \
    }                                                                                            \
    FLASHLAB_EXPORT_ALL(cp_async_w##W##s##S, cp_async_w##W##s##S, W * 32)
CP_ASYNC_VARIANT(4, 2)
CP_ASYNC_VARIANT(4, 3)
CP_ASYNC_VARIANT(8, 2)
CP_ASYNC_VARIANT(8, 3)
