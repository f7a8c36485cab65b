// Stage 15, flash decode with the combine fused: stage 14 less its second kernel. Each
// split still writes its normalized O and its LSE, then counts itself done on its row
// tile's counter; the split that counts last, whichever it is, merges every split's
// partial results (reference::split_kv::combine) for that tile's rows and writes the
// final O and LSE. No combine launch waits for the whole grid: each tile's merge runs as
// soon as its own splits are done, while other tiles still stream the cache (book:
// "Stage 15: the combine fused").
// The rest is stage 14's: split-KV, GQA packing and the paged cache (book: "Stage 14:
// flash decode"). Inside a block the four warps share each 64-key tile, 16 keys each,
// every warp against all 16 rows, and their online softmax states merge once, at the end,
// through shared memory.
#include <flashlab/common.cuh>
#include <flashlab/decode.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>

namespace flashlab {

// ANCHOR: tiles
constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int ROWS = 16;                     // packed rows per block: one m16 tile
constexpr int BLOCK_KV = WARPS * 16;         // keys per tile: 16 per warp, one k-step of P V
constexpr int NSTAGES = 3;                   // cp.async ring: NSTAGES - 1 tiles in flight
// ANCHOR_END: tiles
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(ROWS);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);
FLASHLAB_SAME_AS_HOST(NSTAGES);

// ANCHOR: load_kv
// Queues the copy of keys kv_start .. kv_start + BLOCK_KV of K and V into one ring slot,
// 16 bytes per cp.async. Each key's row is looked up on its own (contiguous or through
// the page table), so a tile may straddle pages; keys past the sequence's end are zero-
// filled by the copy (src-size 0) and never read from memory.
template <typename T, int D>
__device__ __forceinline__ void load_kv_tile(const DecodeParams& p, T* k_tile, T* v_tile, int b, int kv_head, int kv_start,
                                             int seqlen_k) {
    constexpr int CHUNKS = D / 8;  // 16-byte chunks per row
    constexpr int ROW_STEP = THREADS / CHUNKS;
    const int r0 = threadIdx.x / CHUNKS, c = (threadIdx.x % CHUNKS) * 8;
    const T* k = static_cast<const T*>(p.attn.k);
    const T* v = static_cast<const T*>(p.attn.v);
    // All the thread's row offsets first: the page-table loads overlap instead of each
    // holding up the copy after it.
    long long offset[BLOCK_KV / ROW_STEP];
#pragma unroll
    for (int i = 0; i < BLOCK_KV / ROW_STEP; ++i) {
        const int j = kv_start + r0 + i * ROW_STEP;
        offset[i] = j < seqlen_k ? cache_row_offset(p, b, j, kv_head) + c : 0;
    }
#pragma unroll
    for (int i = 0; i < BLOCK_KV / ROW_STEP; ++i) {
        const int r = r0 + i * ROW_STEP;
        const bool valid = kv_start + r < seqlen_k;
        const int dst = tile_offset_swizzled<D>(r, c);
        cp_async_16(smem_addr(k_tile + dst), k + offset[i], valid);
        cp_async_16(smem_addr(v_tile + dst), v + offset[i], valid);
    }
}
// ANCHOR_END: load_kv

template <typename T, int D>
__device__ void flash_decode_split(const DecodeParams& p) {
    extern __shared__ __align__(128) unsigned char smem[];
    T* k_smem = reinterpret_cast<T*>(smem);             // [NSTAGES][BLOCK_KV][D]
    T* v_smem = k_smem + NSTAGES * BLOCK_KV * D;        // [NSTAGES][BLOCK_KV][D]
    T* q_smem = v_smem + NSTAGES * BLOCK_KV * D;        // [ROWS][D]

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int split = blockIdx.x, row0 = blockIdx.y * ROWS;
    const int b = blockIdx.z / p.attn.kv_heads, kv_head = blockIdx.z % p.attn.kv_heads;
    const int seqlen_k = p.seqlens_k[b], seqlen_q = p.attn.seqlen_q;
    const int packed_rows = p.group * seqlen_q;

    // ANCHOR: split_range
    // This split's key tiles; a short sequence's last splits get none and write only an
    // empty partial (LSE -inf), which the combine weighs as zero.
    const SplitTiles range = split_tiles(split, p.tiles_per_split, seqlen_k, BLOCK_KV);
    const int tile_begin = range.begin, n_tiles = range.count;
    // ANCHOR_END: split_range

    // Q's packed rows: the group's heads, token by token; rows past the group are zeros.
#pragma unroll
    for (int chunk = threadIdx.x; chunk < ROWS * D / 8; chunk += THREADS) {
        const int r = chunk / (D / 8), c = (chunk % (D / 8)) * 8;
        const bool valid = row0 + r < packed_rows && n_tiles > 0;
        const PackedRow pr = unpack_row(p, kv_head, min(row0 + r, packed_rows - 1));
        const T* src = static_cast<const T*>(p.attn.q) + q_row_offset(p.attn, b, pr.token, pr.head) + c;
        cp_async_16(smem_addr(q_smem + tile_offset_swizzled<D>(r, c)), src, valid);
    }
    auto issue_kv = [&](int t) {  // t counts this split's tiles; one commit group each
        if (t < n_tiles) {
            const int slot = t % NSTAGES;
            load_kv_tile<T, D>(p, k_smem + slot * BLOCK_KV * D, v_smem + slot * BLOCK_KV * D, b, kv_head,
                               (tile_begin + t) * BLOCK_KV, seqlen_k);
        }
        cp_async_commit();
    };
#pragma unroll
    for (int t = 0; t < NSTAGES - 1; ++t) issue_kv(t);  // Q travels in tile 0's group

    // Row state per lane: rows g and g + 8 of the tile (C fragment layout), this warp's keys.
    float o_rmem[D / 8][4] = {};
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};  // scaled log2 units
    float row_sum[2] = {0.f, 0.f};                      // this lane's columns only, summed at the end
    uint32_t q_frag[D / 16][4];

    const int k_off0 = tile_offset_swizzled<D>((lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8);
    const int v_off0 = tile_offset_swizzled<D>(((lane / 8) % 2) * 8 + lane % 8, (lane / 16) * 8);
    // The causal limit of this lane's rows: query token i sees keys j < i + seqlen_k - seqlen_q + 1.
    int key_end[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int packed = row0 + quad_group(lane) + 8 * r;
        key_end[r] = p.attn.causal ? min(seqlen_k, packed / p.group + seqlen_k - seqlen_q + 1) : seqlen_k;
    }
    const int block_key_end = p.attn.causal ? min(seqlen_k, row0 / p.group + seqlen_k - seqlen_q + 1) : seqlen_k;

    for (int t = 0; t < n_tiles; ++t) {
        // ANCHOR: ring
        // Tile t has landed once at most NSTAGES - 2 younger groups are pending; after the
        // barrier every warp is done with tile t - 1, whose slot takes tile t + NSTAGES - 1.
        cp_async_wait<NSTAGES - 2>();
        __syncthreads();
        issue_kv(t + NSTAGES - 1);
        // ANCHOR_END: ring
        if (t == 0) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk)
                ldmatrix_x4(q_frag[kk], smem_addr(q_smem + swizzled_step_cols(tile_offset_swizzled<D>(lane % 16, (lane / 16) * 8), kk)));
        }
        const T* k_tile = k_smem + (t % NSTAGES) * BLOCK_KV * D;
        const T* v_tile = v_smem + (t % NSTAGES) * BLOCK_KV * D;
        const int kv_start = (tile_begin + t) * BLOCK_KV;

        // ANCHOR: warp_tile
        // S = Q K^T on this warp's 16 keys: [16 rows][16 keys], two n8 fragments.
        float s_rmem[2][4] = {};
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t kb[4];
            ldmatrix_x4(kb, smem_addr(k_tile + swizzled_step_rows<D>(swizzled_step_cols(k_off0, kk), 2 * warp)));
            mma_m16n8k16<T>(s_rmem[0], q_frag[kk], kb[0], kb[1]);
            mma_m16n8k16<T>(s_rmem[1], q_frag[kk], kb[2], kb[3]);
        }
        // The mask, only on a tile that reaches past the sequence or a row's causal limit.
        if (kv_start + BLOCK_KV > block_key_end) {
#pragma unroll
            for (int n = 0; n < 2; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int j = kv_start + warp * 16 + n * 8 + mma_m16n8_c(lane, e).col;
                    if (j >= key_end[e / 2]) s_rmem[n][e] = -CUDART_INF_F;
                }
        }
        // The online softmax of the warp's 16 rows over its keys so far.
        uint32_t p_frag[4];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float tile_max = quad_max(fmaxf(fmaxf(s_rmem[0][2 * r], s_rmem[0][2 * r + 1]),
                                                  fmaxf(s_rmem[1][2 * r], s_rmem[1][2 * r + 1]))) * p.attn.scale_log2;
            const float m_new = fmaxf(row_max[r], tile_max);
            const float m_base = m_new == -CUDART_INF_F ? 0.f : m_new;  // no key yet: avoid -inf - -inf
            const float rescale = fast_exp2(row_max[r] - m_base);
            row_max[r] = m_new;
            row_sum[r] *= rescale;
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {
                o_rmem[n][2 * r] *= rescale;
                o_rmem[n][2 * r + 1] *= rescale;
            }
#pragma unroll
            for (int n = 0; n < 2; ++n) {
                const float p0 = fast_exp2(fmaf(s_rmem[n][2 * r], p.attn.scale_log2, -m_base));
                const float p1 = fast_exp2(fmaf(s_rmem[n][2 * r + 1], p.attn.scale_log2, -m_base));
                row_sum[r] += p0 + p1;
                p_frag[n * 2 + r] = pack2<T>(p0, p1);  // P as the A fragment of one k-step
            }
        }
        // O += P V on the same 16 keys.
#pragma unroll
        for (int n = 0; n < D / 8; n += 2) {
            uint32_t vb[4];
            ldmatrix_x4_trans(vb, smem_addr(v_tile + swizzled_step_rows<D>(swizzled_step_cols(v_off0, n / 2), 2 * warp)));
            mma_m16n8k16<T>(o_rmem[n], p_frag, vb[0], vb[1]);
            mma_m16n8k16<T>(o_rmem[n + 1], p_frag, vb[2], vb[3]);
        }
        // ANCHOR_END: warp_tile
    }
    cp_async_wait<0>();
    __syncthreads();  // the ring is free: the merge below reuses it

    // ANCHOR: merge_warps
    // Merge the four warps' states: each row's max over the warps, then each warp's O and
    // sum rescaled to it, summed through shared memory (the split-KV merge, in a block).
    float* o_merge = reinterpret_cast<float*>(smem);       // [WARPS][ROWS][D]
    float* max_merge = o_merge + WARPS * ROWS * D;          // [WARPS][ROWS]
    float* sum_merge = max_merge + WARPS * ROWS;            // [WARPS][ROWS]
    float* lse_merge = sum_merge + WARPS * ROWS;            // [ROWS], natural log
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        row_sum[r] = quad_sum(row_sum[r]);
        if (quad_lane(lane) == 0) {
            max_merge[warp * ROWS + quad_group(lane) + 8 * r] = row_max[r];
            sum_merge[warp * ROWS + quad_group(lane) + 8 * r] = row_sum[r];
        }
    }
    __syncthreads();
    float weight[2];  // this warp's factor for each of its rows: its share of the block's sum
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int row = quad_group(lane) + 8 * r;
        float m = -CUDART_INF_F;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) m = fmaxf(m, max_merge[w * ROWS + row]);
        const float m_base = m == -CUDART_INF_F ? 0.f : m;
        float sum = 0.f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += sum_merge[w * ROWS + row] * fast_exp2(max_merge[w * ROWS + row] - m_base);
        weight[r] = sum > 0.f ? fast_exp2(row_max[r] - m_base) / sum : 0.f;
        // The row's LSE comes from the same max and sum: warp 0 keeps it for the epilogue.
        if (warp == 0 && quad_lane(lane) == 0) lse_merge[row] = sum > 0.f ? (m_base + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const RowCol rc = mma_m16n8_c(lane, e);
            o_merge[(warp * ROWS + rc.row) * D + n * 8 + rc.col] = o_rmem[n][e] * weight[e / 2];
        }
    __syncthreads();
    // ANCHOR_END: merge_warps

    // ANCHOR: epilogue
    // One split: O and the LSE are final. Several: this split's normalized O and its LSE,
    // in fp32, for the combine kernel.
    const bool final_result = p.num_splits == 1;
    for (int i = threadIdx.x; i < ROWS * D; i += THREADS) {
        const int row = i / D, col = i % D;
        if (row0 + row >= packed_rows) continue;
        float o = 0.f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) o += o_merge[(w * ROWS + row) * D + col];
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const long long at = q_row_offset(p.attn, b, pr.token, pr.head) + col;
        if (final_result)
            static_cast<T*>(p.attn.o)[at] = from_float<T>(o);
        else
            p.o_partial[static_cast<long long>(split) * p.attn.batch * seqlen_q * p.attn.heads * D + at] = o;
    }
    if (threadIdx.x < ROWS && row0 + threadIdx.x < packed_rows) {
        const int row = threadIdx.x;
        const float lse = lse_merge[row];
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const long long at = lse_index(p.attn, b, pr.head, pr.token);
        if (final_result)
            p.attn.lse[at] = lse;
        else
            p.lse_partial[static_cast<long long>(split) * p.attn.batch * p.attn.heads * seqlen_q + at] = lse;
    }
    // ANCHOR_END: epilogue
    if (final_result) return;

    // ANCHOR: last_split
    // Count this split done on its row tile's counter. The fence first: this block's
    // partial O and LSE are visible to the whole GPU before its count is. The block that
    // sees the count reach num_splits is the last, so every other split's results are
    // written; it sets the counter back to zero for the next launch (no split of this
    // tile will touch it again) and merges.
    __shared__ int last_split;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        int* count = p.split_counters + blockIdx.z * gridDim.y + blockIdx.y;
        last_split = atomicAdd(count, 1) == p.num_splits - 1;
        if (last_split) *count = 0;
    }
    __syncthreads();
    if (!last_split) return;
    __threadfence();
    // ANCHOR_END: last_split

    // ANCHOR: merge_splits
    // The merge of stage 14's combine kernel for this tile's rows. A warp per row finds
    // LSE = ln sum_s exp(LSE_s) and each split's weight exp(LSE_s - LSE) (an empty split,
    // LSE -inf, weighs zero), kept in shared memory. Then a thread per four columns of a
    // row sums them over the splits, sixteen splits' loads in flight at once: this block
    // alone merges the tile, so its few round trips to the L2 are the step's tail. The
    // other splits' results are read through the L2 (__ldcg): it is where they were
    // written, and no stale line of them can sit in this SM's L1.
    const int rows = min(ROWS, packed_rows - row0), splits = p.num_splits;
    float* split_weight = reinterpret_cast<float*>(smem);  // [ROWS][splits]
    float* row_lse = split_weight + ROWS * splits;         // [ROWS]
    const long long lse_stride = static_cast<long long>(p.attn.batch) * p.attn.heads * seqlen_q, o_stride = lse_stride * D;
    for (int row = warp; row < rows; row += WARPS) {
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const float* lse_s = p.lse_partial + lse_index(p.attn, b, pr.head, pr.token);
        float* w = split_weight + row * splits;
        float m = -CUDART_INF_F;
        for (int s = lane; s < splits; s += 32) m = fmaxf(m, w[s] = __ldcg(lse_s + s * lse_stride));
        m = warp_max(m);
        const float m_base = m == -CUDART_INF_F ? 0.f : m;
        float sum = 0.f;
        for (int s = lane; s < splits; s += 32) sum += __expf(w[s] - m_base);
        sum = warp_sum(sum);
        for (int s = lane; s < splits; s += 32) w[s] = sum > 0.f ? __expf(w[s] - m_base) / sum : 0.f;
        if (lane == 0) row_lse[row] = sum > 0.f ? m_base + __logf(sum) : -CUDART_INF_F;
    }
    __syncthreads();
    constexpr int IN_FLIGHT = 16;  // splits whose float4 loads are issued together
    for (int task = threadIdx.x; task < rows * D / 4; task += THREADS) {
        const int row = task / (D / 4), col = task % (D / 4) * 4;
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const long long at = q_row_offset(p.attn, b, pr.token, pr.head) + col;
        float4 o = {0.f, 0.f, 0.f, 0.f};
        for (int s0 = 0; s0 < splits; s0 += IN_FLIGHT) {
            float4 part[IN_FLIGHT];
#pragma unroll
            for (int i = 0; i < IN_FLIGHT; ++i)
                if (s0 + i < splits) part[i] = __ldcg(reinterpret_cast<const float4*>(p.o_partial + (s0 + i) * o_stride + at));
#pragma unroll
            for (int i = 0; i < IN_FLIGHT; ++i)
                if (s0 + i < splits) {
                    const float w = split_weight[row * splits + s0 + i];
                    o.x += w * part[i].x, o.y += w * part[i].y, o.z += w * part[i].z, o.w += w * part[i].w;
                }
        }
        T* out = static_cast<T*>(p.attn.o) + at;
        out[0] = from_float<T>(o.x), out[1] = from_float<T>(o.y), out[2] = from_float<T>(o.z), out[3] = from_float<T>(o.w);
    }
    if (threadIdx.x < rows) {
        const PackedRow pr = unpack_row(p, kv_head, row0 + threadIdx.x);
        p.attn.lse[lse_index(p.attn, b, pr.head, pr.token)] = row_lse[threadIdx.x];
    }
    // ANCHOR_END: merge_splits
}


}  // namespace flashlab

using flashlab::flash_decode_split;
FLASHLAB_EXPORT_ALL_DECODE(flash_decode_split, flash_decode_split, flashlab::THREADS)
