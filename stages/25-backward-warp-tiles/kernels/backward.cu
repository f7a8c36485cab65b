// Stage 25, the backward with FlashAttention-2's warp tiles (book: "Stage 25: the
// backward's warp tiles"). Stage 22's math, kernels and block shape are unchanged: P
// recomputed from the LSE (book: "What is recomputed and what is stored"), a block owning
// 128 keys that walks the query blocks, dK and dV summed in registers, dQ added with
// 8-byte REDs or in the deterministic order (book: "dQ's atomics", "The deterministic
// order"). The one idea: each product gets warp tiles of 32 x 32 or wider, with P and dS
// written to shared memory so that the products which need them by key can read them, where
// stage 22's warps each owned 16 keys and kept P^T and dS^T in registers.
#include <flashlab/atomic.cuh>
#include <flashlab/backward.cuh>
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/smem_tile.cuh>
#include <flashlab/tile_copy.cuh>

namespace flashlab {

// ANCHOR: tiles
constexpr int WARPS = 8;
constexpr int THREADS = WARPS * 32;
constexpr int BLOCK_KV = 128;  // a block's keys (FlashAttention-2's key block)
// Query rows per step: FlashAttention-2's 64 at d128 and 128 at d64, where the registers
// allow a tile twice as tall and each step's fixed costs then serve twice the FLOPs.
template <int D>
FL_HOST_DEVICE constexpr int block_q() { return D == 64 ? 128 : 64; }
constexpr int NSTAGES = 2;     // Q/dO ring: the next step's tiles arrive during this one
constexpr int PRE_ROWS = 64, PRE_THREADS = 128;    // the preprocess: query rows and threads per block
constexpr int POST_ROWS = 64, POST_THREADS = 128;  // the postprocess: the same
// The main kernel's dynamic shared memory: K and V, the Q and dO rings, the P and dS tiles,
// and the LSE and D of each slot's query rows.
template <int D>
FL_HOST_DEVICE constexpr int main_smem_bytes() {
    constexpr int BLOCK_Q = block_q<D>();
    return (2 * BLOCK_KV * D + 2 * NSTAGES * BLOCK_Q * D + 2 * BLOCK_Q * BLOCK_KV) * 2 + NSTAGES * 2 * BLOCK_Q * 4;
}
// ANCHOR_END: tiles
constexpr int MAIN_SMEM_BYTES_D64 = main_smem_bytes<64>();
constexpr int MAIN_SMEM_BYTES_D128 = main_smem_bytes<128>();
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);
constexpr int BLOCK_Q_D64 = block_q<64>(), BLOCK_Q_D128 = block_q<128>();
FLASHLAB_SAME_AS_HOST(BLOCK_Q_D64);
FLASHLAB_SAME_AS_HOST(BLOCK_Q_D128);
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(PRE_ROWS);
FLASHLAB_SAME_AS_HOST(PRE_THREADS);
FLASHLAB_SAME_AS_HOST(POST_ROWS);
FLASHLAB_SAME_AS_HOST(POST_THREADS);
FLASHLAB_SAME_AS_HOST(MAIN_SMEM_BYTES_D64);
FLASHLAB_SAME_AS_HOST(MAIN_SMEM_BYTES_D128);
static_assert(PRE_ROWS % 16 == 0, "one dQ semaphore per 16 query rows: a preprocess block zeroes whole ones");
static_assert(BLOCK_Q_D64 % 16 == 0 && BLOCK_Q_D128 % 16 == 0, "query block m counts on semaphore m of ceil(seqlen_q / 16): never more blocks than those");
static_assert(WARPS == 8 && BLOCK_KV == 128, "the warp tiles below are 8 warps of 32 rows");
static_assert(THREADS >= 2 * BLOCK_Q_D64 && THREADS >= 2 * BLOCK_Q_D128, "threads 0 .. 2 BLOCK_Q - 1 stage one LSE or one D of the next step's query rows");
static_assert(NSTAGES == 2, "one barrier per step refills the slot of step s-1 with step s+1");

template <int D>
__device__ __forceinline__ int tile_offset(int row, int col) { return tile_offset_swizzled<D>(row, col); }
// The P and dS tiles have rows of BLOCK_KV 16-bit elements, swizzled like a D = 128 tile.
__device__ __forceinline__ int ps_offset(int query, int key) { return tile_offset_swizzled<BLOCK_KV>(query, key); }

// ANCHOR: preprocess
// D_i = sum_d dO_id O_id for each of the block's query rows (book: "What is recomputed and
// what is stored"): 8 lanes a row, each reading 16 bytes of dO and of O at a time, summed
// with three shuffles. The block also zeroes dQ's fp32 accumulator and its semaphores for its
// rows: the main kernel only adds to them, and the backward runs again and again.
template <typename T, int D>
__device__ void preprocess(const BwdParams& bp) {
    const AttnParams& p = bp.fwd;
    constexpr int LANES_PER_ROW = 8;
    constexpr int CHUNKS_PER_LANE = D / 8 / LANES_PER_ROW;  // 16-byte chunks: 1 at D = 64, 2 at D = 128
    constexpr int ROWS_PER_PASS = PRE_THREADS / LANES_PER_ROW;
    static_assert(D % (8 * LANES_PER_ROW) == 0 && PRE_ROWS % ROWS_PER_PASS == 0, "whole rows and chunks");
    const int row0 = blockIdx.x * PRE_ROWS, h = blockIdx.y, b = blockIdx.z;
    const int sub = threadIdx.x % LANES_PER_ROW;
#pragma unroll
    for (int pass = 0; pass < PRE_ROWS / ROWS_PER_PASS; ++pass) {
        const int i = row0 + pass * ROWS_PER_PASS + threadIdx.x / LANES_PER_ROW;
        float sum = 0.f;
        if (i < p.seqlen_q) {
            const T* d_o = static_cast<const T*>(bp.d_o) + q_row_offset(p, b, i, h);
            const T* o = static_cast<const T*>(p.o) + q_row_offset(p, b, i, h);
#pragma unroll
            for (int c = 0; c < CHUNKS_PER_LANE; ++c) {
                const int col = (sub + c * LANES_PER_ROW) * 8;
                const uint4 dov = *reinterpret_cast<const uint4*>(d_o + col);
                const uint4 ov = *reinterpret_cast<const uint4*>(o + col);
                const T* dos = reinterpret_cast<const T*>(&dov);
                const T* os = reinterpret_cast<const T*>(&ov);
#pragma unroll
                for (int e = 0; e < 8; ++e) sum = fmaf(to_float(dos[e]), to_float(os[e]), sum);
            }
        }
        // The row's 8 lanes are 8 consecutive lanes of one warp; every lane shuffles.
#pragma unroll
        for (int offset = LANES_PER_ROW / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset);
        if (sub == 0 && i < p.seqlen_q) bp.delta[lse_index(p, b, h, i)] = sum;
    }

    // dQ's accumulator, [b][s][h][D] like Q: the block's rows, 16 bytes a store.
    constexpr int F4_PER_ROW = D / 4;
    const int rows = min(PRE_ROWS, p.seqlen_q - row0);
    static_assert(PRE_ROWS * F4_PER_ROW % PRE_THREADS == 0, "whole passes");
#pragma unroll
    for (int pass = 0; pass < PRE_ROWS * F4_PER_ROW / PRE_THREADS; ++pass) {
        const int idx = pass * PRE_THREADS + threadIdx.x, r = idx / F4_PER_ROW, c = (idx % F4_PER_ROW) * 4;
        if (r < rows) *reinterpret_cast<float4*>(bp.dq_accum + q_row_offset(p, b, row0 + r, h) + c) = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    // The semaphores, one per 16 query rows of (b, h): this block's PRE_ROWS / 16 of them.
    const int sems = ceil_div(p.seqlen_q, 16);
    const int sem = blockIdx.x * (PRE_ROWS / 16) + threadIdx.x;
    if (threadIdx.x < PRE_ROWS / 16 && sem < sems) bp.dq_semaphore[(static_cast<long long>(b) * p.heads + h) * sems + sem] = 0;
}
// ANCHOR_END: preprocess

// The main kernel: one block per BLOCK_KV keys of one K/V head, as in stage 22. What
// changes is who computes what (book: "The warps' tiles"). Stage 22's warps each owned 16
// keys and read every step's whole Q and dO tiles in four of the five products, so the
// kernel loaded from shared memory ~1.4 times what FlashAttention-2 loads for the same
// FLOPs. Here each product gets the warp tiles FlashAttention-2 gives it (d128; at d64 the
// step is 128 queries, WM = 4 by WN = 2 warps, and S's warp tile 32 x 64):
//   S  = Q K^T, dP = dO V^T   (64 x 128: 2 x 4 warps of 32 queries x 32 keys)
//   P and dS go to shared memory, queries as rows
//   dV += P^T dO, dK += dS^T Q (128 x D: 4 x 2 warps of 32 keys x D / 2)
//   dQ  = dS K               (64 x D: 2 x 4 warps of 32 queries x D / 4)
// A 32 x 32 tile loads 4 fragments for 8 mma per k-step where stage 22's 16 x 32 loaded 3
// for 4; P and dS cost one store each and a second barrier's worth of waiting.
template <typename T, int D>
__device__ void attention_backward(const BwdParams& bp) {
    const AttnParams& p = bp.fwd;
    constexpr int BLOCK_Q = block_q<D>();
    // S, dP and dQ: WM warps along the queries, 32 rows each, by WN along the keys (S, dP)
    // or the columns (dQ); dV and dK: 4 warps along the keys by 2 along the columns.
    constexpr int WM = BLOCK_Q / 32, WN = WARPS / WM, KEYS_W = BLOCK_KV / WN, NT = KEYS_W / 8;
    extern __shared__ __align__(128) unsigned char smem[];
    T* k_smem = reinterpret_cast<T*>(smem);       // [BLOCK_KV][D]
    T* v_smem = k_smem + BLOCK_KV * D;            // [BLOCK_KV][D]
    T* q_smem = v_smem + BLOCK_KV * D;            // [NSTAGES][BLOCK_Q][D]
    T* do_smem = q_smem + NSTAGES * BLOCK_Q * D;  // [NSTAGES][BLOCK_Q][D]
    T* p_smem = do_smem + NSTAGES * BLOCK_Q * D;   // [BLOCK_Q][BLOCK_KV]: P, queries as rows
    T* ds_smem = p_smem + BLOCK_Q * BLOCK_KV;      // [BLOCK_Q][BLOCK_KV]: dS, queries as rows
    // [NSTAGES][2][BLOCK_Q]: each slot's query rows' LSE log2(e) (+inf: P = 0), then their D.
    float* rows_smem = reinterpret_cast<float*>(ds_smem + BLOCK_Q * BLOCK_KV);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = quad_group(lane), t = quad_lane(lane);
    const int kv_start = blockIdx.x * BLOCK_KV, kv_head = blockIdx.y, b = blockIdx.z;
    const int group = p.heads / p.kv_heads;
    const long long q_stride = static_cast<long long>(p.heads) * D;
    const long long kv_stride = static_cast<long long>(p.kv_heads) * D;

    // The steps: every query head of the group, and for each, the query blocks that see
    // this block's keys. Causal (bottom-right aligned): row i sees key kv_start from
    // i = kv_start - (seqlen_k - seqlen_q) on, and rows before it see none of these keys.
    // That row is < seqlen_q (kv_start < seqlen_k), so every block has at least one step.
    const int m_first = p.causal ? max(0, kv_start - (p.seqlen_k - p.seqlen_q)) / BLOCK_Q : 0;
    const int m_blocks = ceil_div(p.seqlen_q, BLOCK_Q) - m_first;
    const int n_steps = group * m_blocks;
    // The step's head and query block, carried from step to step instead of divided out of
    // it (an integer division is some 20 instructions, and stage 22 does three a step): nxt
    // for the step issue() and row_term() load (step 0 in the prologue, s + 1 during step s,
    // the only steps they are asked for), cur for the step being computed. With dQ's row
    // addresses taken from one 64-bit base a step, 1.03-1.05 times faster
    // (bench/experiments/2026-11-28-backward-warp-tiles).
    int nxt_h = kv_head * group, nxt_m = m_first, cur_h = nxt_h, cur_m = nxt_m;
    auto advance = [&] {
        cur_h = nxt_h, cur_m = nxt_m;
        if (++nxt_m == m_first + m_blocks) nxt_m = m_first, ++nxt_h;
    };

    // One commit group per step: its Q and dO tiles (step 0's also carries K and V).
    // Committed even when empty, so cp_async_wait<0> means the same in every step.
    auto issue = [&](int step) {
        if (step < n_steps) {
            const int h = nxt_h, q_start = nxt_m * BLOCK_Q, slot = step % NSTAGES;
            load_tile_async<T, D, BLOCK_Q, THREADS>(q_smem + slot * BLOCK_Q * D,
                                                    static_cast<const T*>(p.q) + q_row_offset(p, b, q_start, h), q_stride,
                                                    p.seqlen_q - q_start);
            load_tile_async<T, D, BLOCK_Q, THREADS>(do_smem + slot * BLOCK_Q * D,
                                                    static_cast<const T*>(bp.d_o) + q_row_offset(p, b, q_start, h), q_stride,
                                                    p.seqlen_q - q_start);
        }
        cp_async_commit();
    };
    // This thread's share of a step's row terms: threads 0..63 the LSE of one query row, in
    // log2 units, threads 64..127 its D, threads 128..255 none. A row with no key at all
    // (forward LSE -inf) and a row past seqlen_q get LSE +inf, so exp2(S scale_log2 - LSE)
    // is 0 for them, with no mask.
    auto row_term = [&](int step) {
        if (step >= n_steps || threadIdx.x >= 2 * BLOCK_Q) return 0.f;
        const int i = nxt_m * BLOCK_Q + threadIdx.x % BLOCK_Q;
        if (i >= p.seqlen_q) return threadIdx.x < BLOCK_Q ? CUDART_INF_F : 0.f;
        const long long at = lse_index(p, b, nxt_h, i);
        if (threadIdx.x >= BLOCK_Q) return bp.delta[at];
        const float lse = p.lse[at];
        return lse == -CUDART_INF_F ? CUDART_INF_F : lse * CUDART_L2E_F;
    };

    // Prologue: K and V once, with step 0's Q and dO; step 0's row terms.
    load_tile_async<T, D, BLOCK_KV, THREADS>(k_smem, static_cast<const T*>(p.k) + kv_row_offset(p, b, kv_start, kv_head), kv_stride,
                                             p.seqlen_k - kv_start);
    load_tile_async<T, D, BLOCK_KV, THREADS>(v_smem, static_cast<const T*>(p.v) + kv_row_offset(p, b, kv_start, kv_head), kv_stride,
                                             p.seqlen_k - kv_start);
    issue(0);
    if (threadIdx.x < 2 * BLOCK_Q) rows_smem[threadIdx.x] = row_term(0);
    advance();  // cur: step 0; nxt: step 1

    // ANCHOR: warp_tiles
    // The warp's tile in each product, and where its lane's ldmatrix.x4 addresses start
    // (stage 9's three patterns; steps from there with one XOR or add):
    // a_off: an A fragment whose rows are the tile's rows (row-major: Q, dO, dS);
    // b_off: a B fragment, two n8 tiles whose rows are N (K, V for S and dP);
    // at_off: an A fragment read by .trans from a tile stored k-major (P^T, dS^T);
    // bt_off: a B fragment read by .trans, rows as k (dO, Q, K).
    const int sq = 32 * (warp % WM), sk = KEYS_W * (warp / WM);  // S and dP: queries, keys
    const int kvk = 32 * (warp % 4), kvd = D / 2 * (warp / 4);    // dV and dK: keys, columns
    const int qq = 32 * (warp % WM), qd = D / WN * (warp / WM);   // dQ: queries, columns
    const int a_off0 = tile_offset<D>(sq + lane % 16, (lane / 16) * 8);
    const int b_off0 = tile_offset<D>(sk + (lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8);
    const int at_off0 = ps_offset((lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8);
    const int bt_off0 = tile_offset<D>(((lane / 8) % 2) * 8 + lane % 8, (lane / 16) * 8);
    const int ds_a0 = ps_offset(qq + lane % 16, (lane / 16) * 8);
    const int ps_store0 = ps_offset(sq + g, sk + 2 * t);  // the lane's first P and dS store
    static_assert(D / WN % 16 == 0, "dQ's column slices are whole pairs of n8 tiles");
    // ANCHOR_END: warp_tiles

    // acc (32 queries x KEYS_W keys) = the warp's 32 rows of a_tile (Q or dO) times its
    // KEYS_W rows of b_tile (K or V), transposed, over D.
    auto warp_tile_qk = [&](float (&acc)[2][NT][4], const T* a_tile, const T* b_tile) {
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[mi][n][e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t a[2][4], bf[NT / 2][4];
#pragma unroll
            for (int i = 0; i < 2; ++i)
                ldmatrix_x4(a[i], smem_addr(a_tile + swizzled_step_rows<D>(swizzled_step_cols(a_off0, kk), 2 * i)));
#pragma unroll
            for (int i = 0; i < NT / 2; ++i)
                ldmatrix_x4(bf[i], smem_addr(b_tile + swizzled_step_rows<D>(swizzled_step_cols(b_off0, kk), 2 * i)));
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int n = 0; n < NT; ++n) mma_m16n8k16<T>(acc[mi][n], a[mi], bf[n / 2][(n % 2) * 2], bf[n / 2][(n % 2) * 2 + 1]);
        }
    };
    // acc (32 keys x D / 2) += the warp's 32 keys of at_tile (P or dS, read as P^T or dS^T)
    // times its D / 2 columns of b_tile (dO or Q), over the step's BLOCK_Q queries.
    auto warp_tile_kv = [&](float (&acc)[2][D / 16][4], const T* at_tile, const T* b_tile) {
#pragma unroll
        for (int kk = 0; kk < BLOCK_Q / 16; ++kk) {
            uint32_t a[2][4];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
                ldmatrix_x4_trans(a[mi], smem_addr(at_tile + swizzled_step_rows<BLOCK_KV>(swizzled_step_cols(at_off0, kvk / 16 + mi), 2 * kk)));
#pragma unroll
            for (int n = 0; n < D / 16; n += 2) {
                uint32_t bf[4];
                ldmatrix_x4_trans(bf, smem_addr(b_tile + swizzled_step_rows<D>(swizzled_step_cols(bt_off0, kvd / 16 + n / 2), 2 * kk)));
#pragma unroll
                for (int mi = 0; mi < 2; ++mi) {
                    mma_m16n8k16<T>(acc[mi][n], a[mi], bf[0], bf[1]);
                    mma_m16n8k16<T>(acc[mi][n + 1], a[mi], bf[2], bf[3]);
                }
            }
        }
    };

    // The lane's elements of the warp's 32 keys x D / 2 columns of dK and dV: C rows
    // kvk + 16 mi + g + 8 (e / 2), columns kvd + 8 n + 2 t + e % 2.
    float dk_rmem[2][D / 16][4] = {};
    float dv_rmem[2][D / 16][4] = {};

    for (int step = 0; step < n_steps; ++step) {
        // The first barrier of a step: after it this step's Q and dO (and at step 0 K and
        // V) are in, and every warp is done with step s-1, so its Q/dO slot, its row terms'
        // slot and the P and dS tiles are free again.
        cp_async_wait<0>();
        __syncthreads();
        issue(step + 1);
        const float next_row_term = row_term(step + 1);  // loaded now, stored at the end of the step

        const int h = cur_h, m = cur_m, q_start = m * BLOCK_Q, slot = step % NSTAGES;
        const T* q_tile = q_smem + slot * BLOCK_Q * D;
        const T* do_tile = do_smem + slot * BLOCK_Q * D;
        const float* lse_log2 = rows_smem + slot * 2 * BLOCK_Q;
        const float* delta = lse_log2 + BLOCK_Q;

        {
            float s_rmem[2][NT][4];  // S, then P in place
            warp_tile_qk(s_rmem, q_tile, k_smem);

            // ANCHOR: recompute_p
            // P, recomputed from S and the LSE, as in stage 22; the query is now the row.
            // Lane's element e of tile (mi, n): query sq + 16 mi + g + 8 (e / 2), key
            // sk + 8 n + 2 t + e % 2. The mask is compiled only where the warp's 32 x KEYS_W
            // tile reaches past seqlen_k or the causal diagonal.
            auto recompute_p = [&](auto MASKED) {
#pragma unroll
                for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int row = sq + 16 * mi + g + 8 * (e / 2);
                        const float lse = lse_log2[row];
#pragma unroll
                        for (int n = 0; n < NT; ++n) {
                            float prob = fast_exp2(fmaf(s_rmem[mi][n][e], p.scale_log2, -lse));
                            if constexpr (decltype(MASKED)::value) {
                                const int j = kv_start + sk + 8 * n + 2 * t + e % 2, i = q_start + row;
                                if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, i))) prob = 0.f;
                            }
                            s_rmem[mi][n][e] = prob;
                        }
                    }
            };
            masked_or_not<KEYS_W>(p, kv_start + sk, q_start + sq, recompute_p);
            // ANCHOR_END: recompute_p

            float dp_rmem[2][NT][4];  // dP, then dS in place
            warp_tile_qk(dp_rmem, do_tile, v_smem);
            // ANCHOR: ds
            // dS = P o (dP - D), in place: D belongs to the query, the row here. dS = 0
            // wherever P = 0, so masked keys and rows past seqlen_q add nothing.
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const float d = delta[sq + 16 * mi + g + 8 * (e / 2)];
#pragma unroll
                    for (int n = 0; n < NT; ++n) dp_rmem[mi][n][e] = s_rmem[mi][n][e] * (dp_rmem[mi][n][e] - d);
                }
            // ANCHOR_END: ds

            // ANCHOR: store_p_ds
            // P and dS rounded to the dtype and stored, queries as rows: the other products'
            // warps read them by their keys. Lane's pair (e = 2r, 2r + 1) of tile (mi, n) is
            // one 32-bit store.
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int n = 0; n < NT; ++n)
#pragma unroll
                    for (int r = 0; r < 2; ++r) {
                        // Stepped from one offset: 8 n sets column bits the start leaves 0,
                        // and whole 8-row steps keep the row's swizzle.
                        const int at = (ps_store0 ^ (8 * n)) + (16 * mi + 8 * r) * BLOCK_KV;
                        *reinterpret_cast<uint32_t*>(p_smem + at) = pack2<T>(s_rmem[mi][n][2 * r], s_rmem[mi][n][2 * r + 1]);
                        *reinterpret_cast<uint32_t*>(ds_smem + at) = pack2<T>(dp_rmem[mi][n][2 * r], dp_rmem[mi][n][2 * r + 1]);
                    }
            // ANCHOR_END: store_p_ds
        }
        // The second barrier: P and dS are whole.
        __syncthreads();

        // dV += P^T dO and dK += dS^T Q, the warp's 32 keys x D / 2 columns.
        warp_tile_kv(dv_rmem, p_smem, do_tile);
        warp_tile_kv(dk_rmem, ds_smem, q_tile);

        // ANCHOR: deterministic
        // The deterministic order (book: "The deterministic order"), as in stage 22: the key
        // blocks add to query block m of head h in the order of their index, thread 0 waits
        // for the semaphore to count this block's index, and a barrier passes its acquire on.
        int* sem = bp.dq_semaphore + (static_cast<long long>(b) * p.heads + h) * ceil_div(p.seqlen_q, 16) + m;
        if (bp.deterministic) {
            if (threadIdx.x == 0)
                while (load_acquire_gpu(sem) != static_cast<int>(blockIdx.x)) {
                }
            __syncthreads();
        }
        // ANCHOR_END: deterministic

        float* dq_base = bp.dq_accum + q_row_offset(p, b, q_start + qq + g, h) + qd + 2 * t;
        // ANCHOR: dq_atomics
        // dQ = dS K for the warp's 32 query rows and D / WN columns over the block's 128 keys,
        // added to the fp32 accumulator with stage 22's 8-byte REDs (book: "dQ's atomics").
        {
            float dq[2][D / WN / 8][4] = {};
#pragma unroll
            for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
                uint32_t a[2][4];
#pragma unroll
                for (int mi = 0; mi < 2; ++mi)
                    ldmatrix_x4(a[mi], smem_addr(ds_smem + swizzled_step_rows<BLOCK_KV>(swizzled_step_cols(ds_a0, kk), 2 * mi)));
#pragma unroll
                for (int n = 0; n < D / WN / 8; n += 2) {
                    uint32_t kf[4];
                    ldmatrix_x4_trans(kf, smem_addr(k_smem + swizzled_step_rows<D>(swizzled_step_cols(bt_off0, qd / 16 + n / 2), 2 * kk)));
#pragma unroll
                    for (int mi = 0; mi < 2; ++mi) {
                        mma_m16n8k16<T>(dq[mi][n], a[mi], kf[0], kf[1]);
                        mma_m16n8k16<T>(dq[mi][n + 1], a[mi], kf[2], kf[3]);
                    }
                }
            }
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    const int i = q_start + qq + 16 * mi + g + 8 * r;
                    if (i >= p.seqlen_q) continue;
                    float* dq_row = dq_base + (16 * mi + 8 * r) * static_cast<int>(q_stride);
#pragma unroll
                    for (int n = 0; n < D / WN / 8; ++n) red_add_v2_f32(dq_row + n * 8, make_float2(dq[mi][n][2 * r], dq[mi][n][2 * r + 1]));
                }
        }
        // ANCHOR_END: dq_atomics

        // ANCHOR: deterministic_count
        // Deterministic: count this block's adds done. The barrier orders every thread's adds
        // before thread 0's release, which makes them visible to the whole GPU before the new
        // count is (stage 15 counts its splits the same way; a __threadfence() in every
        // thread before the barrier and a plain atomicAdd would do too).
        if (bp.deterministic) {
            __syncthreads();
            if (threadIdx.x == 0) atomic_add_acq_rel_gpu(sem, 1);
        }
        // ANCHOR_END: deterministic_count
        if (threadIdx.x < 2 * BLOCK_Q) rows_smem[((step + 1) % NSTAGES) * 2 * BLOCK_Q + threadIdx.x] = next_row_term;
        advance();
    }
    cp_async_wait<0>();  // no copy may still be landing when the block exits

    // dK and dV of the warp's 32 keys x D / 2 columns, summed over every query row of every
    // head of the group: written once, dK times the scale, rows past seqlen_k not at all.
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int j = kv_start + kvk + 16 * mi + g + 8 * r;
            if (j >= p.seqlen_k) continue;
            T* dk = static_cast<T*>(bp.dk) + kv_row_offset(p, b, j, kv_head) + kvd + 2 * t;
            T* dv = static_cast<T*>(bp.dv) + kv_row_offset(p, b, j, kv_head) + kvd + 2 * t;
#pragma unroll
            for (int n = 0; n < D / 16; ++n) {
                *reinterpret_cast<uint32_t*>(dk + n * 8) = pack2<T>(dk_rmem[mi][n][2 * r] * p.scale, dk_rmem[mi][n][2 * r + 1] * p.scale);
                *reinterpret_cast<uint32_t*>(dv + n * 8) = pack2<T>(dv_rmem[mi][n][2 * r], dv_rmem[mi][n][2 * r + 1]);
            }
        }
}

// ANCHOR: postprocess
// dQ = scale times its fp32 accumulator, rounded to the dtype: 8 elements a thread at a
// time, two 16-byte loads and one 16-byte store.
template <typename T, int D>
__device__ void postprocess(const BwdParams& bp) {
    const AttnParams& p = bp.fwd;
    constexpr int CHUNKS = D / 8;
    const int row0 = blockIdx.x * POST_ROWS, h = blockIdx.y, b = blockIdx.z;
    const int rows = min(POST_ROWS, p.seqlen_q - row0);
    static_assert(POST_ROWS * CHUNKS % POST_THREADS == 0, "whole passes");
#pragma unroll
    for (int pass = 0; pass < POST_ROWS * CHUNKS / POST_THREADS; ++pass) {
        const int idx = pass * POST_THREADS + threadIdx.x, r = idx / CHUNKS, c = (idx % CHUNKS) * 8;
        if (r >= rows) continue;
        const long long at = q_row_offset(p, b, row0 + r, h) + c;
        const float4 lo = *reinterpret_cast<const float4*>(bp.dq_accum + at);
        const float4 hi = *reinterpret_cast<const float4*>(bp.dq_accum + at + 4);
        const float s = p.scale;
        *reinterpret_cast<uint4*>(static_cast<T*>(bp.dq) + at) = make_uint4(pack2<T>(lo.x * s, lo.y * s), pack2<T>(lo.z * s, lo.w * s),
                                                                            pack2<T>(hi.x * s, hi.y * s), pack2<T>(hi.z * s, hi.w * s));
    }
}
// ANCHOR_END: postprocess

}  // namespace flashlab

using flashlab::attention_backward;
using flashlab::postprocess;
using flashlab::preprocess;
FLASHLAB_EXPORT_BACKWARD(bwd_preprocess, preprocess, flashlab::PRE_THREADS)
FLASHLAB_EXPORT_BACKWARD(bwd, attention_backward, flashlab::THREADS)
FLASHLAB_EXPORT_BACKWARD(bwd_postprocess, postprocess, flashlab::POST_THREADS)
