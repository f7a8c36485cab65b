// Stage 6, fewer instructions per mma: stage 5's kernel with its loop trimmed. Stage 5
// overlaps loads with compute, yet its warps spend most of their issue slots on work that
// is not tensor-core work: the swizzle recomputed for every ldmatrix and copy, one
// ldmatrix per mma's B fragment, exp2f's range fix-ups, a multiply by the scale per score.
// Here, with the same tiles and ring:
//   - ldmatrix.x4 for K and V: one instruction feeds two mma's B fragments
//   - each lane computes its ldmatrix and copy addresses once and steps them with one XOR
//     or one add (smem_tile.cuh), and copies run a compile-time number of times
//   - the softmax scale is folded into the exponent's FFMA, exp2(s * scale_log2 - m), and
//     the exponential is the bare MUFU.EX2 (fast_exp2)
// Book: "Stage 6: fewer instructions per mma".
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>
#include <flashlab/tile_copy.cuh>

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

template <typename T, int D>
__device__ void fewer_instructions_attention(const AttnParams& p) {
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
        if (tile < n_tiles) load_tile_async<T, D, BLOCK_KV, THREADS>(k_smem + slot * BLOCK_KV * D, k_gmem + kv_start * kv_stride, kv_stride, valid);
        cp_async_commit();
        if (tile < n_tiles) load_tile_async<T, D, BLOCK_KV, THREADS>(v_smem + slot * BLOCK_KV * D, v_gmem + kv_start * kv_stride, kv_stride, valid);
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

    // Q_rmem: this warp's 16 rows as D/16 A fragments, loaded once Q has landed (t = 0).
    uint32_t q_rmem[D / 16][4];

    // Per lane: rows g and g + 8 of the warp's block (g = lane / 4), so two of everything.
    float o_rmem[D / 8][4] = {};  // O accumulator: D/8 C fragments of 16x8
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};  // in scaled log2 units
    float row_sum[2] = {0.f, 0.f};  // this lane's partial sums; the quad adds them up at the end
    const int row_in_block = warp * 16 + quad_group(lane);
    const int q_row[2] = {q_start + row_in_block, q_start + row_in_block + 8};

    // ANCHOR: lane_offsets
    // This lane's ldmatrix row address in a K and a V tile at the first step (n = kk = 0);
    // later steps are one XOR (columns) or one add (rows) away (smem_tile.cuh).
    const int k_off0 = tile_offset<D>((lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8);
    const int v_off0 = tile_offset<D>(((lane / 8) % 2) * 8 + lane % 8, (lane / 16) * 8);
    // ANCHOR_END: lane_offsets

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

        // ANCHOR: qk
        // S = Q K^T. ldmatrix.x4: lanes 0-15 address keys n*8.. (dims kk*16 + 0 | 8), lanes
        // 16-31 keys (n+1)*8..: the B fragments of two 8-key n-tiles at once.
        float s_rmem[BLOCK_KV / 8][4] = {};
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
            for (int n = 0; n < BLOCK_KV / 8; n += 2) {
                uint32_t kb[4];
                ldmatrix_x4(kb, smem_addr(k_smem_t + swizzled_step_rows<D>(swizzled_step_cols(k_off0, kk), n)));
                mma_m16n8k16<T>(s_rmem[n], q_rmem[kk], kb[0], kb[1]);
                mma_m16n8k16<T>(s_rmem[n + 1], q_rmem[kk], kb[2], kb[3]);
            }
        }
        // ANCHOR_END: qk

        // Masking costs instructions, so only tiles that cross the sequence end or the
        // causal diagonal pay for it; all others are fully visible.
        const bool needs_mask = tile_needs_mask(p, kv_start, BLOCK_KV, q_start);
        float tile_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = e / 2;  // c0, c1 are row g; c2, c3 row g + 8
                if (needs_mask) {
                    const int j = kv_start + mma_m16n8_c(lane, e).col + n * 8;
                    if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, q_row[r]))) s_rmem[n][e] = -CUDART_INF_F;
                }
                tile_max[r] = fmaxf(tile_max[r], s_rmem[n][e]);
            }
        }

        float rescale[2], m_base[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            // The quad's four lanes hold the row's 4 column pairs of each fragment.
            // ANCHOR: rescale
            // The scale is positive, so max(s) * scale is the max of the scaled scores.
            const float m_new = fmaxf(row_max[r], quad_max(tile_max[r]) * p.scale_log2);
            m_base[r] = m_new == -CUDART_INF_F ? 0.f : m_new;  // fully masked so far: avoid -inf - -inf
            rescale[r] = fast_exp2(row_max[r] - m_base[r]);
            // ANCHOR_END: rescale
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
                prob[e] = fast_exp2(fmaf(s_rmem[n][e], p.scale_log2, -m_base[e / 2]));  // one FFMA + one MUFU
                row_sum[e / 2] += prob[e];
            }
            p_rmem[n / 2][(n % 2) * 2 + 0] = pack2<T>(prob[0], prob[1]);
            p_rmem[n / 2][(n % 2) * 2 + 1] = pack2<T>(prob[2], prob[3]);
        }

        // ANCHOR: wait_v
        cp_async_wait<2 * (NSTAGES - 1)>();  // now V_t too
        __syncthreads();
        // ANCHOR_END: wait_v

        // ANCHOR: pv
        // O += P V. ldmatrix.x4.trans: lanes 0-15 address keys kk*16.. at dims n*8, lanes
        // 16-31 the same keys at dims (n+1)*8: the B fragments of two 8-dim n-tiles.
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
#pragma unroll
            for (int n = 0; n < D / 8; n += 2) {
                uint32_t vb[4];
                ldmatrix_x4_trans(vb, smem_addr(v_smem_t + swizzled_step_rows<D>(swizzled_step_cols(v_off0, n / 2), 2 * kk)));
                mma_m16n8k16<T>(o_rmem[n], p_rmem[kk], vb[0], vb[1]);
                mma_m16n8k16<T>(o_rmem[n + 1], p_rmem[kk], vb[2], vb[3]);
            }
        }
        // ANCHOR_END: pv
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

using flashlab::fewer_instructions_attention;
FLASHLAB_EXPORT_ALL(fewer_instructions, fewer_instructions_attention, flashlab::THREADS)
