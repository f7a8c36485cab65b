// Stage 5, pipelining: stage 4's swizzled tensor-core kernel, with the loads moved off the
// critical path. K and V tiles arrive through cp.async (global to shared memory without
// passing through registers) into a ring of NSTAGES slots, so while the warps compute on
// tile t the copies of tiles t+1 .. t+NSTAGES-1 are already in flight. K and V of a tile
// are separate commit groups: S = QK^T and the softmax start as soon as K has landed,
// while V may still be on its way. Also new:
//   - ldmatrix.x4 for K and V: one instruction feeds two mma's B fragments
//   - the softmax scale is folded into the exponent's FFMA: exp2(s * scale_log2 - m),
//     and exp2 is the bare MUFU.EX2 (fast_exp2)
//   - addresses are computed once per lane and stepped (smem_tile.cuh), not recomputed
//   - the warps, rows per warp, BLOCK_KV and ring depth are template parameters; every
//     variant is compiled and `FLASHLAB_STAGE5=w4m1k64s2` (a name) picks one (src/lib.rs)
// Book: "Stage 5: cp.async pipelining".
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>

namespace flashlab {

// ANCHOR: config
// Tile configuration (mirrored in src/lib.rs). Shared memory per block is
// (BLOCK_Q + 2 * NSTAGES * BLOCK_KV) * D * 2 bytes, e.g. 80 KiB at D = 128, 4 warps, 2 stages.
template <int D, int WARPS_, int MT_, int BLOCK_KV_, int NSTAGES_>
struct Config {
    static constexpr int WARPS = WARPS_;
    static constexpr int THREADS = WARPS * 32;
    static constexpr int MT = MT_;  // m16 row tiles per warp: 16 * MT query rows each
    static constexpr int BLOCK_Q = WARPS * 16 * MT;
    static constexpr int BLOCK_KV = BLOCK_KV_;
    static constexpr int NSTAGES = NSTAGES_;  // ring depth: tiles in flight while one is computed
    static_assert(NSTAGES >= 2, "a ring of one slot cannot overlap loads with compute");
    static_assert(BLOCK_KV % 16 == 0 && D % 16 == 0, "mma.m16n8k16 steps");
};
// ANCHOR_END: config

template <int D>
__device__ __forceinline__ int tile_offset(int row, int col) { return tile_offset_swizzled<D>(row, col); }

// ANCHOR: load_tile_async
// Queues the copy of ROWS global rows into a swizzled tile: one 16-byte cp.async per chunk.
// The trip count is a compile-time constant and each thread keeps its chunk column,
// stepping down by THREADS / CHUNKS rows (a multiple of 8, so the swizzle's XOR stays the
// same): the shared-memory side is an immediate offset, the global side one 64-bit add.
// A tile with rows past `valid` (only the last one, when seqlen is not a multiple of the
// tile) takes the slow path, where those rows are zero-filled by the copy itself (src-size
// 0) and the per-row test costs a compare and a select per copy.
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile_async(T* tile_smem, const T* gmem, long long stride, int valid) {
    constexpr int CHUNKS = D / 8;
    constexpr int ROW_STEP = THREADS / CHUNKS;
    static_assert(THREADS % CHUNKS == 0 && ROW_STEP % 8 == 0 && ROWS % ROW_STEP == 0, "whole rows per step, 8-row aligned");
    const int r0 = threadIdx.x / CHUNKS, c = (threadIdx.x % CHUNKS) * 8;
    const uint32_t dst0 = smem_addr(tile_smem + tile_offset<D>(r0, c));
    const T* src = gmem + r0 * stride + c;
    const long long src_step = ROW_STEP * stride;
    if (valid >= ROWS) {
#pragma unroll
        for (int i = 0; i < ROWS / ROW_STEP; ++i, src += src_step) cp_async_16(dst0 + 2 * swizzled_step_rows<D>(0, i * ROW_STEP / 8), src);
    } else {
#pragma unroll
        for (int i = 0; i < ROWS / ROW_STEP; ++i, src += src_step) {
            const bool in_range = r0 + i * ROW_STEP < valid;
            // An out-of-range row reads nothing (src-size 0); its address is only kept valid.
            cp_async_16(dst0 + 2 * swizzled_step_rows<D>(0, i * ROW_STEP / 8), in_range ? src : gmem, in_range);
        }
    }
}
// ANCHOR_END: load_tile_async

// A compile-time int as a value, for the generic lambdas below.
template <int N>
struct Int {
    static constexpr int value = N;
};

template <typename T, int D, int WARPS, int MT, int BLOCK_KV_, int NSTAGES_, bool ONE_BARRIER = false, bool ROWSUM_MMA = false,
          bool LAZY = false, bool CHUNKED = false>
__device__ void cp_async_attention(const AttnParams& p) {
    static_assert(MT == 1 || MT == 2, "one or two m16 tiles per warp");
    using C = Config<D, WARPS, MT, BLOCK_KV_, NSTAGES_>;
    constexpr int BLOCK_Q = C::BLOCK_Q, BLOCK_KV = C::BLOCK_KV, NSTAGES = C::NSTAGES, THREADS = C::THREADS;
    // With one m16 tile per warp, Q's fragments fit in registers for the whole loop (as in
    // stages 3-4). With two, O and S alone take ~190 registers at D = 128, so Q's fragments
    // are re-read from shared memory each tile instead; in exchange each K and V fragment
    // loaded by ldmatrix feeds two mma's (one per m16 tile), halving shared-memory reads
    // per FLOP.
    constexpr bool Q_IN_REGISTERS = MT == 1;
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

    // ANCHOR: issue_kv
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
    // ANCHOR_END: issue_kv

    // ANCHOR: prologue
    // Prologue: Q (in tile 0's K group) and the first NSTAGES - 1 tiles.
    load_tile_async<T, D, BLOCK_Q, THREADS>(q_smem, static_cast<const T*>(p.q) + q_row_offset(p, b, q_start, h), q_stride,
                                            p.seqlen_q - q_start);
#pragma unroll
    for (int s = 0; s < NSTAGES - 1; ++s) issue_kv(s);
    // ANCHOR_END: prologue

    // Per lane and m16 tile m: rows g and g + 8 of the tile, so [MT][2] of each row state.
    uint32_t q_rmem[Q_IN_REGISTERS ? D / 16 : 1][4];
    float o_rmem[MT][D / 8][4] = {};
    // row_sum: this lane's partial sums (a quad adds them at the end); with ROWSUM_MMA,
    // l_frag: the whole row's sum from the tensor cores, as the C fragment of P times ones.
    float row_max[MT][2], row_sum[MT][2];
    float l_frag[MT][4] = {};
    float rescale_o[MT][2];  // LAZY: O's factor, applied just before P V
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            row_max[m][r] = -CUDART_INF_F;  // in scaled log2 units
            row_sum[m][r] = 0.f;
        }
    // The query row of this lane's row r of m16 tile m, computed where it is needed (the
    // mask and the epilogue) rather than kept in registers across the loop.
    auto q_row = [&](int m, int r) { return q_start + (warp * MT + m) * 16 + quad_group(lane) + 8 * r; };
    // Where lane's ldmatrix.x4 address for Q's A fragment (m16 tile m, k-step kk) points:
    // stepped from the lane's first address like K's and V's below.
    const int q_off0 = tile_offset<D>(warp * MT * 16 + lane % 16, (lane / 16) * 8);
    auto q_frag_addr = [&](int m, int kk) {
        return smem_addr(q_smem + swizzled_step_cols(swizzled_step_rows<D>(q_off0, 2 * m), kk));
    };
    // ANCHOR: lane_offsets
    // This lane's ldmatrix row address in a K and a V tile at the first step (n = kk = 0);
    // later steps are one XOR (columns) or one add (rows) away (smem_tile.cuh).
    const int k_off0 = tile_offset<D>((lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8);
    const int v_off0 = tile_offset<D>(((lane / 8) % 2) * 8 + lane % 8, (lane / 16) * 8);
    // ANCHOR_END: lane_offsets

    // ANCHOR: qk
    // S = Q K^T. ldmatrix.x4: lanes 0-15 address keys n*8.. (dims kk*16 + 0 | 8), lanes
    // 16-31 keys (n+1)*8..: B fragments of two 8-key n-tiles at once, each feeding every
    // m16 tile of the warp.
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
            for (int m = 0; m < MT; ++m) {
                if constexpr (Q_IN_REGISTERS) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) q_frag[m][i] = q_rmem[kk][i];
                } else {
                    ldmatrix_x4(q_frag[m], q_frag_addr(m, kk));
                }
            }
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

    // The online softmax of m16 tile M, in two parts. max_and_rescale: the mask (only on tiles
    // that need it), the row max, the rescale of the row sum and of O. probabilities: P's
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
            tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffff, tile_max[r], 1));
            tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffff, tile_max[r], 2));
            // The scale is positive, so max(s) * scale is the max of the scaled scores.
            float m_new = fmaxf(row_max[m][r], tile_max[r] * p.scale_log2);
            // LAZY (FlashAttention-4's trick): keep the old max unless the new one is more
            // than 8 larger (in log2 units), so P stays below 2^8, exact in bf16 and f16,
            // and after the first tiles O's rescale is almost always skipped.
            if constexpr (LAZY) m_new = tile_max[r] * p.scale_log2 > row_max[m][r] + 8.f ? m_new : row_max[m][r];
            m_base[m][r] = m_new == -CUDART_INF_F ? 0.f : m_new;
            const float rescale = fast_exp2(row_max[m][r] - m_base[m][r]);
            row_max[m][r] = m_new;
            if constexpr (ROWSUM_MMA)
                l_frag[m][2 * r] *= rescale;
            else
                row_sum[m][r] *= rescale;
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
    auto probabilities = [&](auto M, int kk) {
        constexpr int m = decltype(M)::value;
        if constexpr (ROWSUM_MMA) {
            // The row sums on the tensor cores: P times a B fragment of ones leaves each
            // row's sum over the k-step's 16 keys in every column of C, the whole row's and
            // not one lane's, so no shuffles either. 8 HMMA per tile replace 64 FADD, and
            // the sum is of P as rounded for P V.
#pragma unroll
            for (int n = 2 * kk; n < 2 * kk + 2; ++n)
#pragma unroll
                for (int h2 = 0; h2 < 2; ++h2)
                    p_rmem[m][kk][(n % 2) * 2 + h2] =
                        pack2<T>(fast_exp2(fmaf(s_rmem[m][n][2 * h2], p.scale_log2, -m_base[m][h2])),
                                 fast_exp2(fmaf(s_rmem[m][n][2 * h2 + 1], p.scale_log2, -m_base[m][h2])));
            mma_m16n8k16<T>(l_frag[m], p_rmem[m][kk], ones2<T>(), ones2<T>());
        } else {
#pragma unroll
            for (int n = 2 * kk; n < 2 * kk + 2; ++n) {
                float prob[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    prob[e] = fast_exp2(fmaf(s_rmem[m][n][e], p.scale_log2, -m_base[m][e / 2]));  // one FFMA + one MUFU
                    row_sum[m][e / 2] += prob[e];
                }
                p_rmem[m][kk][(n % 2) * 2 + 0] = pack2<T>(prob[0], prob[1]);
                p_rmem[m][kk][(n % 2) * 2 + 1] = pack2<T>(prob[2], prob[3]);
            }
        }
    };
    // ANCHOR_END: probabilities
    auto softmax = [&](auto M, auto MASKED, int kv_start) {
        max_and_rescale(M, MASKED, kv_start);
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) probabilities(M, kk);
    };

    // ANCHOR: pv
    // O += P V. ldmatrix.x4.trans: lanes 0-15 address keys kk*16.. at dims n*8, lanes
    // 16-31 the same keys at dims (n+1)*8: B fragments of two 8-dim n-tiles.
    auto pv_step = [&](const T* v_tile, int kk) {
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
    };
    auto pv = [&](const T* v_tile) {
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) pv_step(v_tile, kk);
    };
    // ANCHOR_END: pv

    auto needs_mask = [&](int kv_start) {
        return kv_start + BLOCK_KV > p.seqlen_k || (p.causal && kv_start + BLOCK_KV > causal_key_end(p, q_start));
    };
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

    // ANCHOR: wait_k
    for (int t = 0; t < n_tiles; ++t) {
        // Refill the slot freed at the end of the previous iteration, then wait for tile
        // t's K: after it come V_t and the 2 (NSTAGES - 1) groups of the tiles ahead.
        if constexpr (ONE_BARRIER) {
            static_assert(NSTAGES == 2, "one barrier per tile: the slot of tile t-1 is refilled with tile t+1");
            cp_async_wait<0>();
            __syncthreads();  // K_t and V_t are in, and every warp is done with tile t-1
            issue_kv(t + 1);
        } else {
            issue_kv(t + NSTAGES - 1);
            cp_async_wait<2 * NSTAGES - 1>();
            __syncthreads();
        }
    // ANCHOR_END: wait_k

        if (Q_IN_REGISTERS && t == 0) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) ldmatrix_x4(q_rmem[kk], q_frag_addr(0, kk));
        }
        const T* k_tile = k_smem + (t % NSTAGES) * BLOCK_KV * D;
        const T* v_tile = v_smem + (t % NSTAGES) * BLOCK_KV * D;
        const int kv_start = t * BLOCK_KV;

        // ANCHOR: order
        // Masked and unmasked tiles run separate copies of the code, so the common,
        // unmasked one is straight-line code the compiler can schedule as a whole: the
        // softmax of one m16 tile overlaps the other's and, with one barrier per tile
        // (V already waited for), the first P V products.
        auto tile = [&](auto MASKED) {
            qk(k_tile);
            if constexpr (CHUNKED) {
                // ANCHOR: chunked
                // CHUNKED: P one k-step at a time, each right before its P V products. P V's
                // step kk needs only P's step kk, so ptxas can issue the 16 MUFU.EX2 of step
                // kk + 1 between the 34 HMMAs of step kk: the special-function unit and the
                // tensor cores work at once inside one warp (book: stage 5, step 11).
                static_assert(ONE_BARRIER, "P V in the tile's straight-line code");
                max_and_rescale(Int<0>{}, MASKED, kv_start);
                if constexpr (MT == 2) max_and_rescale(Int<1>{}, MASKED, kv_start);
                if constexpr (LAZY) rescale_o_lazily();
#pragma unroll
                for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
                    probabilities(Int<0>{}, kk);
                    if constexpr (MT == 2) probabilities(Int<1>{}, kk);
                    pv_step(v_tile, kk);
                }
                // ANCHOR_END: chunked
            } else {
                softmax(Int<0>{}, MASKED, kv_start);
                if constexpr (MT == 2) softmax(Int<1>{}, MASKED, kv_start);
                if constexpr (ONE_BARRIER) {
                    if constexpr (LAZY) rescale_o_lazily();
                    pv(v_tile);
                }
            }
        };
        if (needs_mask(kv_start))
            tile(Int<1>{});
        else
            tile(Int<0>{});
        // ANCHOR_END: order

        // ANCHOR: wait_v_pv
        if constexpr (!ONE_BARRIER) {
            cp_async_wait<2 * (NSTAGES - 1)>();  // now V_t too
            __syncthreads();
            if constexpr (LAZY) rescale_o_lazily();
            pv(v_tile);
            __syncthreads();  // every warp is done with this slot before it is refilled
        }
        // ANCHOR_END: wait_v_pv
    }

#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float sum = ROWSUM_MMA ? l_frag[m][2 * r] : row_sum[m][r];
            if constexpr (!ROWSUM_MMA) {
                sum += __shfl_xor_sync(0xffffffff, sum, 1);
                sum += __shfl_xor_sync(0xffffffff, sum, 2);
            }
            if (q_row(m, r) >= p.seqlen_q) continue;
            const float inv_sum = sum > 0.f ? 1.f / sum : 1.f;
            T* o = static_cast<T*>(p.o) + q_row_offset(p, b, q_row(m, r), h);
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {
                const int col = n * 8 + mma_m16n8_c(lane, 0).col;
                *reinterpret_cast<uint32_t*>(o + col) = pack2<T>(o_rmem[m][n][2 * r] * inv_sum, o_rmem[m][n][2 * r + 1] * inv_sum);
            }
            if (quad_lane(lane) == 0)
                p.lse[(static_cast<long long>(b) * p.heads + h) * p.seqlen_q + q_row(m, r)] =
                    sum > 0.f ? (row_max[m][r] + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
        }
    }
}

}  // namespace flashlab

// ANCHOR: variants
// Every variant, exported as cp_async_w<W>m<M>k<KV>s<S>[b][x][r][c]_<dtype>_d<D>: W warps of M
// m16 tiles, BLOCK_KV = KV, an S-slot ring, `b` for one barrier per tile (ONE_BARRIER), `x`
// for row sums on the tensor cores (ROWSUM_MMA), `r` for the lazy rescale (LAZY), `c` for
// chunked P (CHUNKED); src/lib.rs lists the same set in VARIANTS.
#define CP_ASYNC_VARIANT(W, M, KV, S, B, X, R, C, SUFFIX)                                              \
    template <typename T, int D>                                                                       \
    __device__ void cp_async_w##W##m##M##k##KV##s##S##SUFFIX(const flashlab::AttnParams& p) {          \
        flashlab::cp_async_attention<T, D, W, M, KV, S, B, X, R, C>(p);                                \
    }                                                                                                  \
    FLASHLAB_EXPORT_ALL(cp_async_w##W##m##M##k##KV##s##S##SUFFIX, cp_async_w##W##m##M##k##KV##s##S##SUFFIX, W * 32)
CP_ASYNC_VARIANT(4, 1, 64, 2, false, false, false, false, )
CP_ASYNC_VARIANT(8, 1, 64, 2, false, false, false, false, )
CP_ASYNC_VARIANT(8, 1, 64, 3, false, false, false, false, )
CP_ASYNC_VARIANT(4, 2, 32, 2, false, false, false, false, )
CP_ASYNC_VARIANT(4, 2, 32, 3, false, false, false, false, )
CP_ASYNC_VARIANT(4, 2, 64, 2, false, false, false, false, )
CP_ASYNC_VARIANT(4, 2, 64, 2, true, false, false, false, b)
CP_ASYNC_VARIANT(4, 1, 64, 2, true, false, false, false, b)
CP_ASYNC_VARIANT(4, 2, 64, 2, false, false, true, false, r)
CP_ASYNC_VARIANT(4, 2, 64, 2, true, true, false, false, bx)
CP_ASYNC_VARIANT(4, 2, 64, 2, true, true, true, false, bxr)
CP_ASYNC_VARIANT(4, 2, 64, 2, true, true, true, true, bxrc)
// ANCHOR_END: variants
