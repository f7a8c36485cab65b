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
#include <flashlab/atomic.cuh>
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
// ANCHOR: wide
// Above D = 128 one block fills an SM (its ring is 200 KiB at D = 256), and four warps,
// one per scheduler, leave each scheduler nothing to switch to while its warp waits on its
// own mma.sync and ldmatrix results. So there each 16 keys get WIDE_COL_SPLIT warps, which
// compute the same S and P and each keep a share of O's columns (book: "Stage 14: flash
// decode", "Head dim 256").
constexpr int WIDE_COL_SPLIT = 2;
template <int D>
FL_HOST_DEVICE constexpr int col_split() { return D > 128 ? WIDE_COL_SPLIT : 1; }
template <int D>
FL_HOST_DEVICE constexpr int threads_for() { return THREADS * col_split<D>(); }
// ANCHOR_END: wide
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(ROWS);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(WIDE_COL_SPLIT);

// ANCHOR: load_kv
// Queues the copy of keys kv_start .. kv_start + BLOCK_KV of K and V into one ring slot,
// 16 bytes per cp.async; keys past the sequence's end are zero-filled by the copy (src-size
// 0) and never read from memory. Where the tile's keys are consecutive cache rows, a thread
// computes its first row's offset and steps by the row stride. Each row's own 64-bit
// arithmetic and page-table branch made the key loop about 820 instructions a tile instead
// of 510 and held a block to 20 GB/s (book: "Stage 14: flash decode", "The loop's
// addresses").
template <typename T, int D>
__device__ __forceinline__ void load_kv_tile(const DecodeParams& p, T* k_tile, T* v_tile, int b, int kv_head, int kv_start,
                                             int seqlen_k) {
    constexpr int CHUNKS = D / 8;  // 16-byte chunks per row
    constexpr int ROW_STEP = threads_for<D>() / CHUNKS;
    const int r0 = threadIdx.x / CHUNKS, c = (threadIdx.x % CHUNKS) * 8;
    const T* k = static_cast<const T*>(p.attn.k);
    const T* v = static_cast<const T*>(p.attn.v);
    long long offset[BLOCK_KV / ROW_STEP];
    if (p.block_table == nullptr || p.page_size >= BLOCK_KV) {
        // Consecutive rows: the sequence's own, or one page's (tiles start at multiples of
        // BLOCK_KV, so a page of BLOCK_KV keys or more holds whole tiles).
        const long long stride = static_cast<long long>(p.attn.kv_heads) * D;
        const long long first = cache_row_offset(p, b, kv_start, kv_head) + r0 * stride + c;
#pragma unroll
        for (int i = 0; i < BLOCK_KV / ROW_STEP; ++i)
            offset[i] = kv_start + r0 + i * ROW_STEP < seqlen_k ? first + i * ROW_STEP * stride : 0;
    } else {
        // Smaller pages: each row through the table, all the thread's rows first, so that
        // the table's loads overlap instead of each holding up the copy after it.
#pragma unroll
        for (int i = 0; i < BLOCK_KV / ROW_STEP; ++i) {
            const int j = kv_start + r0 + i * ROW_STEP;
            offset[i] = j < seqlen_k ? cache_row_offset(p, b, j, kv_head) + c : 0;
        }
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

    // NT threads a block. `warp` picks the warp's 16 keys of each tile, `half` its share of
    // O's DC columns; up to D = 128 they are threadIdx.x / 32 and a constant 0 (see `wide`).
    constexpr int NT = threads_for<D>(), DC = D / col_split<D>();
    const int warp = col_split<D>() > 1 ? threadIdx.x / 32 % WARPS : threadIdx.x / 32, lane = threadIdx.x % 32;
    const int half = col_split<D>() > 1 ? threadIdx.x / THREADS : 0;
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
    for (int chunk = threadIdx.x; chunk < ROWS * D / 8; chunk += NT) {
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
    float o_rmem[DC / 8][4] = {};
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
            for (int n = 0; n < DC / 8; ++n) {
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
        // O += P V on the same 16 keys, for this warp's DC columns of O.
#pragma unroll
        for (int n = 0; n < DC / 8; n += 2) {
            uint32_t vb[4];
            ldmatrix_x4_trans(vb, smem_addr(v_tile + swizzled_step_rows<D>(swizzled_step_cols(v_off0, half * DC / 16 + n / 2), 2 * warp)));
            mma_m16n8k16<T>(o_rmem[n], p_frag, vb[0], vb[1]);
            mma_m16n8k16<T>(o_rmem[n + 1], p_frag, vb[2], vb[3]);
        }
        // ANCHOR_END: warp_tile
    }
    cp_async_wait<0>();
    __syncthreads();  // the ring is free: the merge below reuses it

    // ANCHOR: merge_warps
    // Merge the four warps' states: each warp leaves its rows' max, sum and O in shared
    // memory, and after one barrier the epilogue weighs them (the split-KV merge, in a
    // block). Only the tile's live rows go through shared memory (4 of 16 for one token of
    // a group of 4), as pairs of floats at a row stride of D + 8: the eight rows of a store
    // then fall on different banks, where a stride of D put all eight on the same ones, and
    // those eight-way conflicts made this merge and the epilogue below cost 2.3 µs per
    // block (book: "Stage 15: the combine fused", "Where the time went").
    constexpr int O_STRIDE = D + 8;
    const int rows = min(ROWS, packed_rows - row0);
    float* o_merge = reinterpret_cast<float*>(smem);       // [WARPS][ROWS][O_STRIDE]
    float* max_merge = o_merge + WARPS * ROWS * O_STRIDE;   // [WARPS][ROWS], scaled log2 units
    float* sum_merge = max_merge + WARPS * ROWS;            // [WARPS][ROWS]
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        row_sum[r] = quad_sum(row_sum[r]);
        const RowCol rc = mma_m16n8_c(lane, 2 * r);
        if (rc.row >= rows) continue;  // the whole warp, for rows 8-15 of a tile of 8 or fewer
        if (quad_lane(lane) == 0 && half == 0) {  // both halves hold the same max and sum
            max_merge[warp * ROWS + rc.row] = row_max[r];
            sum_merge[warp * ROWS + rc.row] = row_sum[r];
        }
#pragma unroll
        for (int n = 0; n < DC / 8; ++n)
            *reinterpret_cast<float2*>(o_merge + (warp * ROWS + rc.row) * O_STRIDE + half * DC + n * 8 + rc.col) =
                make_float2(o_rmem[n][2 * r], o_rmem[n][2 * r + 1]);
    }
    __syncthreads();
    // ANCHOR_END: merge_warps

    // ANCHOR: epilogue
    // One split: O and the LSE are final. Several: this split's normalized O and its LSE,
    // in fp32, for the combine. A thread per four columns of a live row rescales each
    // warp's share to the row's max over the warps, sums them, divides by the summed sums
    // and writes the four columns with one store; the thread of column 0 writes the LSE.
    const bool final_result = p.num_splits == 1;
    for (int task = threadIdx.x; task < rows * D / 4; task += NT) {
        const int row = task / (D / 4), col = task % (D / 4) * 4;
        float m = -CUDART_INF_F;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) m = fmaxf(m, max_merge[w * ROWS + row]);
        const float m_base = m == -CUDART_INF_F ? 0.f : m;  // no key in any warp: avoid -inf - -inf
        float scale[WARPS], sum = 0.f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            scale[w] = fast_exp2(max_merge[w * ROWS + row] - m_base);
            sum += sum_merge[w * ROWS + row] * scale[w];
        }
        const float inv_sum = sum > 0.f ? 1.f / sum : 0.f;
        float4 o = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            const float4 share = *reinterpret_cast<const float4*>(o_merge + (w * ROWS + row) * O_STRIDE + col);
            const float f = scale[w] * inv_sum;
            o.x += f * share.x, o.y += f * share.y, o.z += f * share.z, o.w += f * share.w;
        }
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const long long at = q_row_offset(p.attn, b, pr.token, pr.head) + col;
        const float lse = sum > 0.f ? (m_base + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
        const long long lse_at = lse_index(p.attn, b, pr.head, pr.token);
        if (final_result) {
            *reinterpret_cast<uint2*>(static_cast<T*>(p.attn.o) + at) = make_uint2(pack2<T>(o.x, o.y), pack2<T>(o.z, o.w));
            if (col == 0) p.attn.lse[lse_at] = lse;
        } else {
            *reinterpret_cast<float4*>(p.o_partial + static_cast<long long>(split) * p.attn.batch * seqlen_q * p.attn.heads * D + at) = o;
            if (col == 0) p.lse_partial[static_cast<long long>(split) * p.attn.batch * p.attn.heads * seqlen_q + lse_at] = lse;
        }
    }
    // ANCHOR_END: epilogue
    if (final_result) return;

    // ANCHOR: last_split
    // Count this split done on its row tile's counter, one atomic add by thread 0 with
    // release and acquire semantics at GPU scope. Release: the barrier orders every
    // thread's writes of this block's partial O and LSE before thread 0's add, and the
    // release makes them visible to the whole GPU before the count is. Acquire: the block
    // that sees the count reach num_splits - 1 sees every other split's results, and the
    // barrier after passes that on to its threads. That block is the last: it sets the
    // counter back to zero for the next launch (no split of this tile will touch it again)
    // and merges. Two __threadfence()s around a plain atomicAdd did the same, 0.3 µs slower.
    __shared__ int last_split;
    __syncthreads();
    if (threadIdx.x == 0) {
        int* count = p.split_counters + blockIdx.z * gridDim.y + blockIdx.y;
        last_split = atomic_add_acq_rel_gpu(count, 1) == p.num_splits - 1;
        if (last_split) *count = 0;
    }
    __syncthreads();
    if (!last_split) return;
    // ANCHOR_END: last_split

    // ANCHOR: merge_splits
    // The merge of stage 14's combine kernel for this tile's rows, LSE = ln sum_s exp(LSE_s)
    // and O = sum_s exp(LSE_s - LSE) O_s (an empty split, LSE -inf, weighs zero). This
    // block alone merges the tile, so its round trips to the L2 are the step's tail: every
    // split's partial rows are copied into shared memory at once (cp.async, 16 bytes a
    // copy, through the L2 where they were written; no line of them can be in this SM's
    // L1), with their LSEs beside them, one round trip. When they do not all fit (16 rows
    // of 32 splits are 256 KiB), a chunk of splits at a time, each merged into a running
    // state the way online softmax merges a tile.
    constexpr int SMEM_FLOATS = (2 * NSTAGES * BLOCK_KV * D + ROWS * D) * static_cast<int>(sizeof(T)) / 4;
    constexpr int TASKS = ROWS * D / 4 / NT;  // (row, four columns) tasks per thread, at most
    const int splits = p.num_splits, tasks = rows * D / 4;
    const int chunk = min(splits, SMEM_FLOATS / (rows * (D + 1)));
    float* o_chunk = reinterpret_cast<float*>(smem);  // [chunk][rows][D]
    float* lse_chunk = o_chunk + chunk * rows * D;     // [chunk][rows]
    const long long lse_stride = static_cast<long long>(p.attn.batch) * p.attn.heads * seqlen_q, o_stride = lse_stride * D;
    float4 acc[TASKS] = {};
    float run_max[TASKS], run_sum[TASKS] = {};
#pragma unroll
    for (int k = 0; k < TASKS; ++k) run_max[k] = -CUDART_INF_F;
    for (int s0 = 0; s0 < splits; s0 += chunk) {
        const int n = min(chunk, splits - s0);
        // A thread's copies share one row and four columns: one address computed, then a
        // step of one split each (an index computed per copy made the merge 5.8 µs
        // instead of 2.9 at batch 1/8k, 32 splits).
        for (int task = threadIdx.x; task < tasks; task += NT) {
            const int row = task / (D / 4), col = task % (D / 4) * 4;
            const PackedRow pr = unpack_row(p, kv_head, row0 + row);
            const float* src = p.o_partial + s0 * o_stride + q_row_offset(p.attn, b, pr.token, pr.head) + col;
            const uint32_t dst = smem_addr(o_chunk + row * D + col);
#pragma unroll 8
            for (int s = 0; s < n; ++s) cp_async_16(dst + s * rows * D * 4, src + s * o_stride);
        }
        cp_async_commit();
        for (int i = threadIdx.x; i < n * rows; i += NT) {
            const PackedRow pr = unpack_row(p, kv_head, row0 + i % rows);
            lse_chunk[i] = __ldcg(p.lse_partial + (s0 + i / rows) * lse_stride + lse_index(p.attn, b, pr.head, pr.token));
        }
        cp_async_wait<0>();
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TASKS; ++k) {
            const int task = threadIdx.x + k * NT;
            if (task >= tasks) break;
            const int row = task / (D / 4), col = task % (D / 4) * 4;
            float m = run_max[k];
#pragma unroll 8
            for (int s = 0; s < n; ++s) m = fmaxf(m, lse_chunk[s * rows + row]);
            const float m_base = m == -CUDART_INF_F ? 0.f : m;
            const float rescale = __expf(run_max[k] - m_base);
            run_max[k] = m;
            run_sum[k] *= rescale;
            acc[k].x *= rescale, acc[k].y *= rescale, acc[k].z *= rescale, acc[k].w *= rescale;
#pragma unroll 8
            for (int s = 0; s < n; ++s) {
                const float w = __expf(lse_chunk[s * rows + row] - m_base);
                const float4 o = *reinterpret_cast<const float4*>(o_chunk + (s * rows + row) * D + col);
                run_sum[k] += w;
                acc[k].x += w * o.x, acc[k].y += w * o.y, acc[k].z += w * o.z, acc[k].w += w * o.w;
            }
        }
        __syncthreads();  // the chunk is used: the next one may overwrite it
    }
#pragma unroll
    for (int k = 0; k < TASKS; ++k) {
        const int task = threadIdx.x + k * NT;
        if (task >= tasks) break;
        const int row = task / (D / 4), col = task % (D / 4) * 4;
        const float inv = run_sum[k] > 0.f ? 1.f / run_sum[k] : 0.f;
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const long long at = q_row_offset(p.attn, b, pr.token, pr.head) + col;
        *reinterpret_cast<uint2*>(static_cast<T*>(p.attn.o) + at) =
            make_uint2(pack2<T>(acc[k].x * inv, acc[k].y * inv), pack2<T>(acc[k].z * inv, acc[k].w * inv));
        if (col == 0)
            p.attn.lse[lse_index(p.attn, b, pr.head, pr.token)] =
                run_sum[k] > 0.f ? run_max[k] + __logf(run_sum[k]) : -CUDART_INF_F;  // a positive sum has a finite max
    }
    // ANCHOR_END: merge_splits
}


}  // namespace flashlab

using flashlab::flash_decode_split;
FLASHLAB_EXPORT_ALL_DECODE(flash_decode_split, flash_decode_split, flashlab::THREADS, flashlab::threads_for<256>())
