// Stage 22, the backward pass: given dO, the gradient of the loss with respect to the
// forward's output, find dQ, dK and dV (book: "Stage 22: the backward pass"). With
// S = Q K^T, P = softmax(scale S) and O = P V:
//     dV = P^T dO    dP = dO V^T    dS = P o (dP - D)    dQ = scale dS K    dK = scale dS^T Q
// with D_i = sum_d dO_id O_id, the softmax Jacobian's row term: five products (S again,
// dP, dV, dK, dQ) where the forward has two (book: "The five products"), all on mma.sync
// as in stage 9.
//   - What is stored and what is recomputed (book: "What is recomputed and what is
//     stored"): the forward keeps only O and the LSE of each row, and P, too big to store,
//     is recomputed tile by tile from Q, K and the LSE, already normalized:
//     P = exp2(S scale_log2 - LSE log2(e)). D is computed once, by a small preprocess kernel.
//   - Key-major work: a block owns 128 keys of one K/V head and walks every query block that
//     sees them, for every query head of its group, so dK and dV sum in its registers and are
//     written once, with no atomics, GQA's sum over heads included.
//   - dQ's atomics (book: "dQ's atomics"): dQ is a sum over key blocks, which belong to
//     other blocks, so each block adds its share to an fp32 accumulator with atomic adds
//     (sm_90's 8-byte vector REDs, a lane's 2 floats each), and a postprocess kernel scales
//     and rounds it. A block owns 128 keys, 16 a warp (FlashAttention-2's key block), which
//     halves the adds per FLOP of 64.
//   - The deterministic order (book: "The deterministic order"): float addition is not
//     associative, so adds in whatever order the blocks run give results that differ in the
//     last bits from run to run. With `deterministic` set, a semaphore per query block makes
//     the key blocks add in the order of their index.
// Three kernels: bwd_preprocess (D, and the accumulator and semaphores zeroed), bwd (the five
// products) and bwd_postprocess (dQ).
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
constexpr int BLOCK_KV = WARPS * 16;  // a block's keys: each warp owns 16, the m16 rows of its products
constexpr int BLOCK_Q = 64;           // query rows per step
// dQ = dS K of a step, BLOCK_Q x D, split among the warps: DQ_ROW_GROUPS groups of 16 rows,
// each in DQ_COL_SPLITS column slices of D / DQ_COL_SPLITS.
constexpr int DQ_ROW_GROUPS = BLOCK_Q / 16;
constexpr int DQ_COL_SPLITS = WARPS / DQ_ROW_GROUPS;
constexpr int NSTAGES = 2;            // Q/dO ring: the next step's tiles arrive during this one
constexpr int CHUNK_Q = 32;           // query rows whose S^T and dP^T a warp holds at once
constexpr int PRE_ROWS = 64, PRE_THREADS = 128;    // the preprocess: query rows and threads per block
constexpr int POST_ROWS = 64, POST_THREADS = 128;  // the postprocess: the same
// The main kernel's dynamic shared memory: K and V, the Q and dO rings, the dS^T tile,
// and the LSE and D of each slot's query rows.
template <int D>
FL_HOST_DEVICE constexpr int main_smem_bytes() {
    return (2 * BLOCK_KV * D + 2 * NSTAGES * BLOCK_Q * D + BLOCK_KV * BLOCK_Q) * 2 + NSTAGES * 2 * BLOCK_Q * 4;
}
// ANCHOR_END: tiles
constexpr int MAIN_SMEM_BYTES_D64 = main_smem_bytes<64>();
constexpr int MAIN_SMEM_BYTES_D128 = main_smem_bytes<128>();
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);
FLASHLAB_SAME_AS_HOST(BLOCK_Q);
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(PRE_ROWS);
FLASHLAB_SAME_AS_HOST(PRE_THREADS);
FLASHLAB_SAME_AS_HOST(POST_ROWS);
FLASHLAB_SAME_AS_HOST(POST_THREADS);
FLASHLAB_SAME_AS_HOST(MAIN_SMEM_BYTES_D64);
FLASHLAB_SAME_AS_HOST(MAIN_SMEM_BYTES_D128);
static_assert(PRE_ROWS % 16 == 0, "one dQ semaphore per 16 query rows: a preprocess block zeroes whole ones");
static_assert(BLOCK_Q % 16 == 0, "query block m counts on semaphore m of ceil(seqlen_q / 16): never more blocks than those");
static_assert(WARPS == DQ_ROW_GROUPS * DQ_COL_SPLITS, "dQ = dS K: each warp takes 16 query rows and a slice of the columns");
static_assert(THREADS >= 2 * BLOCK_Q, "threads 0 .. 2 BLOCK_Q - 1 stage one LSE or one D of the next step's query rows");
static_assert(BLOCK_Q % CHUNK_Q == 0 && CHUNK_Q % 16 == 0, "whole chunks of whole k-steps");
static_assert(NSTAGES == 2, "one barrier per step refills the slot of step s-1 with step s+1");

template <int D>
__device__ __forceinline__ int tile_offset(int row, int col) { return tile_offset_swizzled<D>(row, col); }
// dS^T's tile has rows of BLOCK_Q 16-bit elements, swizzled like a D = 64 tile.
__device__ __forceinline__ int ds_offset(int key, int query) { return tile_offset_swizzled<BLOCK_Q>(key, query); }

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

// The main kernel: one block per BLOCK_KV keys of one K/V head. Each warp owns 16 keys and
// works transposed, key-major, so that its keys are the m16 rows of every product but dQ's:
//   S^T  = K Q^T      (A: its K rows;  B: Q, as the forward's S = Q K^T reads K)
//   dV  += P^T dO     (A: P^T packed from the C layout; B: dO by ldmatrix .trans, as P V reads V)
//   dP^T = V dO^T     (A: its V rows;  B: dO)
//   dK  += dS^T Q     (A: dS^T packed; B: Q by .trans)
//   dQ   = dS K       (through shared memory: each warp 16 query rows x D / 2 columns, over
//                      all 128 keys)
template <typename T, int D>
__device__ void attention_backward(const BwdParams& bp) {
    const AttnParams& p = bp.fwd;
    extern __shared__ __align__(128) unsigned char smem[];
    T* k_smem = reinterpret_cast<T*>(smem);       // [BLOCK_KV][D]
    T* v_smem = k_smem + BLOCK_KV * D;            // [BLOCK_KV][D]
    T* q_smem = v_smem + BLOCK_KV * D;            // [NSTAGES][BLOCK_Q][D]
    T* do_smem = q_smem + NSTAGES * BLOCK_Q * D;  // [NSTAGES][BLOCK_Q][D]
    T* ds_smem = do_smem + NSTAGES * BLOCK_Q * D;  // [BLOCK_KV][BLOCK_Q]: dS^T, keys as rows
    // [NSTAGES][2][BLOCK_Q]: each slot's query rows' LSE log2(e) (+inf: P = 0), then their D.
    float* rows_smem = reinterpret_cast<float*>(ds_smem + BLOCK_KV * BLOCK_Q);

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
    auto head_of = [&](int step) { return kv_head * group + step / m_blocks; };
    auto q_block_of = [&](int step) { return m_first + step % m_blocks; };

    // One commit group per step: its Q and dO tiles (step 0's also carries K and V).
    // Committed even when empty, so cp_async_wait<0> means the same in every step.
    auto issue = [&](int step) {
        if (step < n_steps) {
            const int h = head_of(step), q_start = q_block_of(step) * BLOCK_Q, slot = step % NSTAGES;
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
        const int i = q_block_of(step) * BLOCK_Q + threadIdx.x % BLOCK_Q;
        if (i >= p.seqlen_q) return threadIdx.x < BLOCK_Q ? CUDART_INF_F : 0.f;
        const long long at = lse_index(p, b, head_of(step), i);
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

    // Where lane's ldmatrix.x4 addresses point, stepped from there with one XOR or add:
    // a_off0: the A fragment of the warp's 16 rows of K or V (as stage 9 reads Q);
    // b_off0: a B fragment of Q or dO, rows as N, two n8 tiles (as stage 9 reads K);
    // bt_off0: a B fragment of dO, Q or K by .trans, rows as k (as stage 9 reads V);
    // ds_off0: dQ's A fragment, dS, read by .trans from dS^T's tile (queries are its columns):
    // the warp's 16 query rows of dQ, group warp % DQ_ROW_GROUPS;
    // bt_dq0: bt_off0 moved to the first column of the warp's slice of dQ, warp / DQ_ROW_GROUPS.
    // A slice is 64 columns at D = 128 (bit 6 of the offset, which the swizzle leaves alone:
    // an add) and 32 at D = 64 (an XOR of bit 5): either way the steps within it, 16 columns
    // at a time, stay inside the bits swizzled_step_cols leaves to them.
    const int a_off0 = tile_offset<D>(warp * 16 + lane % 16, (lane / 16) * 8);
    const int b_off0 = tile_offset<D>((lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8);
    const int bt_off0 = tile_offset<D>(((lane / 8) % 2) * 8 + lane % 8, (lane / 16) * 8);
    const int dq_rows = (warp % DQ_ROW_GROUPS) * 16, dq_col0 = (warp / DQ_ROW_GROUPS) * (D / DQ_COL_SPLITS);
    const int ds_off0 = ds_offset((lane / 16) * 8 + lane % 8, dq_rows + ((lane / 8) % 2) * 8);
    static_assert(D % (DQ_COL_SPLITS * 16) == 0, "whole pairs of n8 tiles in every column slice");
    const int bt_dq0 = swizzled_step_cols(bt_off0, dq_col0 / 16);

    // acc[n] (the warp's 16 rows x query columns 8n..8n+7 of a chunk) = those rows of a_tile
    // times b_tile^T, b_tile the chunk's CHUNK_Q rows of Q or dO.
    auto rows_times_tile_t = [&](float (&acc)[CHUNK_Q / 8][4], const T* a_tile, const T* b_tile) {
#pragma unroll
        for (int n = 0; n < CHUNK_Q / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[n][e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t a[4];
            ldmatrix_x4(a, smem_addr(a_tile + swizzled_step_cols(a_off0, kk)));
#pragma unroll
            for (int n = 0; n < CHUNK_Q / 8; n += 2) {
                uint32_t bf[4];
                ldmatrix_x4(bf, smem_addr(b_tile + swizzled_step_rows<D>(swizzled_step_cols(b_off0, kk), n)));
                mma_m16n8k16<T>(acc[n], a, bf[0], bf[1]);
                mma_m16n8k16<T>(acc[n + 1], a, bf[2], bf[3]);
            }
        }
    };
    // acc (16 rows x D) += a (16 rows x CHUNK_Q, packed A fragments) times b_tile, the chunk's
    // CHUNK_Q rows of dO or Q.
    auto packed_times_tile = [&](float (&acc)[D / 8][4], const uint32_t (&a)[CHUNK_Q / 16][4], const T* b_tile) {
#pragma unroll
        for (int kk = 0; kk < CHUNK_Q / 16; ++kk)
#pragma unroll
            for (int n = 0; n < D / 8; n += 2) {
                uint32_t bf[4];
                ldmatrix_x4_trans(bf, smem_addr(b_tile + swizzled_step_rows<D>(swizzled_step_cols(bt_off0, n / 2), 2 * kk)));
                mma_m16n8k16<T>(acc[n], a[kk], bf[0], bf[1]);
                mma_m16n8k16<T>(acc[n + 1], a[kk], bf[2], bf[3]);
            }
    };
    // The C fragment of a 16 x CHUNK_Q product as A fragments, the forward's P V trick:
    // k-step kk is n8 tiles 2 kk and 2 kk + 1, and each lane already holds its A elements.
    auto pack_a = [&](uint32_t (&a)[CHUNK_Q / 16][4], const float (&c)[CHUNK_Q / 8][4]) {
#pragma unroll
        for (int n = 0; n < CHUNK_Q / 8; ++n)
#pragma unroll
            for (int r = 0; r < 2; ++r) a[n / 2][(n % 2) * 2 + r] = pack2<T>(c[n][2 * r], c[n][2 * r + 1]);
    };

    // The lane's elements of the warp's 16 keys: C rows g and g + 8 (r = e / 2), all D columns.
    float dk_rmem[D / 8][4] = {};
    float dv_rmem[D / 8][4] = {};

    for (int step = 0; step < n_steps; ++step) {
        // One barrier per step: after it this step's Q and dO (and at step 0 K and V) are in,
        // and every warp is done with step s-1, so its Q/dO slot, its row terms' slot and the
        // dS^T tile are free again.
        cp_async_wait<0>();
        __syncthreads();
        issue(step + 1);
        const float next_row_term = row_term(step + 1);  // loaded now, stored at the end of the step

        const int h = head_of(step), m = q_block_of(step), q_start = m * BLOCK_Q, slot = step % NSTAGES;

        // The step's query rows CHUNK_Q at a time: a chunk's S^T and dP^T, 16 keys x 32
        // queries each, are 32 fp32 registers a lane, beside dK's and dV's 128 at D = 128.
        // Whole 64-query steps ran as fast on an H100, but at D = 128 they spill when held
        // to 232 registers and chunks of 32 do not: a margin below the limit of 255.
#pragma unroll
        for (int c = 0; c < BLOCK_Q / CHUNK_Q; ++c) {
            const int q0 = q_start + c * CHUNK_Q;  // the chunk's first query row
            const T* q_tile = q_smem + (slot * BLOCK_Q + c * CHUNK_Q) * D;
            const T* do_tile = do_smem + (slot * BLOCK_Q + c * CHUNK_Q) * D;
            const float* lse_log2 = rows_smem + slot * 2 * BLOCK_Q + c * CHUNK_Q;
            const float* delta = lse_log2 + BLOCK_Q;

            float dp_rmem[CHUNK_Q / 8][4];  // dP^T, then dS^T in place
            rows_times_tile_t(dp_rmem, v_smem, do_tile);
            float s_rmem[CHUNK_Q / 8][4];  // S^T, then P^T in place
            rows_times_tile_t(s_rmem, k_smem, q_tile);

            // ANCHOR: recompute_p
            // P^T, recomputed: S is Q K^T again, and the LSE turns it into the forward's P
            // with one exponential, no row max, no row sum (book: "What is recomputed and
            // what is stored"). Lane's element e of n8 tile n: key g + 8 (e / 2) of the
            // warp's 16, query 8 n + 2 t + e % 2 of the chunk's. Only a chunk whose query
            // rows reach past seqlen_k, or past the causal diagonal, within the warp's 16
            // keys compiles the mask (stage 8's masked_or_not, per warp: the test is uniform
            // in the warp, and with 128 keys a block-wide one would mask twice the chunks);
            // P = 0 there.
            auto recompute_p = [&](auto MASKED) {
#pragma unroll
                for (int n = 0; n < CHUNK_Q / 8; ++n) {
                    const float2 lse = *reinterpret_cast<const float2*>(lse_log2 + n * 8 + 2 * t);
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        float prob = fast_exp2(fmaf(s_rmem[n][e], p.scale_log2, -(e % 2 ? lse.y : lse.x)));
                        if constexpr (decltype(MASKED)::value) {
                            const int j = kv_start + warp * 16 + g + 8 * (e / 2), i = q0 + n * 8 + 2 * t + e % 2;
                            if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, i))) prob = 0.f;
                        }
                        s_rmem[n][e] = prob;
                    }
                }
            };
            masked_or_not<16>(p, kv_start + warp * 16, q0, recompute_p);
            // ANCHOR_END: recompute_p

            // ANCHOR: ds
            // dS^T = P^T o (dP^T - D), in place: D belongs to the query, a column here.
            // dS = 0 wherever P = 0, so masked keys and rows past seqlen_q add nothing to
            // dK and dQ either.
#pragma unroll
            for (int n = 0; n < CHUNK_Q / 8; ++n) {
                const float2 d = *reinterpret_cast<const float2*>(delta + n * 8 + 2 * t);
#pragma unroll
                for (int e = 0; e < 4; ++e) dp_rmem[n][e] = s_rmem[n][e] * (dp_rmem[n][e] - (e % 2 ? d.y : d.x));
            }
            // ANCHOR_END: ds

            // dV += P^T dO: P^T as the A fragment, straight from the registers.
            {
                uint32_t p_frag[CHUNK_Q / 16][4];
                pack_a(p_frag, s_rmem);
                packed_times_tile(dv_rmem, p_frag, do_tile);
            }
            // dS^T rounded to the dtype once: the A fragment of dK += dS^T Q, and, stored in
            // shared memory, dQ's operand. Lane's pair (e = 2r, 2r + 1) of n8 tile n lands at
            // key 16 warp + g + 8 r, queries 8 n + 2 t and + 1 of the chunk: one 32-bit store.
            uint32_t ds_frag[CHUNK_Q / 16][4];
            pack_a(ds_frag, dp_rmem);
#pragma unroll
            for (int n = 0; n < CHUNK_Q / 8; ++n)
#pragma unroll
                for (int r = 0; r < 2; ++r)
                    *reinterpret_cast<uint32_t*>(ds_smem + ds_offset(warp * 16 + g + 8 * r, c * CHUNK_Q + n * 8 + 2 * t)) =
                        ds_frag[n / 2][(n % 2) * 2 + r];
            packed_times_tile(dk_rmem, ds_frag, q_tile);
        }

        // ANCHOR: deterministic
        // The deterministic order (book: "The deterministic order"): the key blocks add to
        // query block m of head h in the order of their index. The key blocks that see a
        // query block are a prefix 0 .. N - 1 of them: m_first above never decreases with
        // kv_start (and is 0 without the mask), so when block x reaches query block m, every
        // block before it reaches m too. So x waits until the semaphore counts x adds.
        // Blocks are dispatched in order of their index (x fastest), so every block it
        // waits for is running or done, and waits only for blocks before it: no deadlock.
        int* sem = bp.dq_semaphore + (static_cast<long long>(b) * p.heads + h) * ceil_div(p.seqlen_q, 16) + m;
        if (bp.deterministic && threadIdx.x == 0)
            while (load_acquire_gpu(sem) != static_cast<int>(blockIdx.x)) {
            }
        // The barrier that completes dS^T's tile for dQ also passes thread 0's acquire on.
        __syncthreads();
        // ANCHOR_END: deterministic

        // ANCHOR: dq_atomics
        // dQ = dS K for the warp's 16 query rows and D / 2 columns over the block's 128 keys
        // (book: "dQ's atomics"). dS comes from dS^T's tile by ldmatrix .trans; K is B read by
        // .trans, as P V reads V. dQ is a sum over every key block, most of them other
        // blocks', so this block adds its share to the fp32 accumulator, once per element,
        // two n8 tiles at a time (8 accumulators live): with 128 keys a block, half the adds
        // per FLOP of 64. The adds are REDs (atomic, nothing returned), and they are what
        // costs: with 64 keys, one scalar RED per element made each warp instruction touch
        // eight 32-byte sectors, each half used, and took ~45% of the main kernel's time on
        // an H200 (bf16, D = 128, 16 heads of 4096 queries: 2.47 ms; 1.34 ms with no adds at
        // all, 1.61 ms with 8-byte vector REDs).
        // So on sm_90 each lane adds its pair of consecutive floats with one 8-byte RED, each
        // warp instruction filling the 8 sectors it touches (red_add_v2_f32; before sm_90,
        // two scalar REDs). A 16-byte RED after a shuffle that gives each lane 4 floats of one
        // row measured slower (1.68 ms against 1.61 at 64 keys on an H100: the shuffles cost
        // more than the halved REDs save; bench/experiments/2026-11-27-backward-dq-atomics).
        {
            uint32_t ds_a[BLOCK_KV / 16][4];
#pragma unroll
            for (int kk = 0; kk < BLOCK_KV / 16; ++kk)
                ldmatrix_x4_trans(ds_a[kk], smem_addr(ds_smem + swizzled_step_rows<BLOCK_Q>(ds_off0, 2 * kk)));
            float* dq_row[2];
            bool row_valid[2];
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int i = q_start + dq_rows + g + 8 * r;
                row_valid[r] = i < p.seqlen_q;
                dq_row[r] = bp.dq_accum + q_row_offset(p, b, row_valid[r] ? i : 0, h) + dq_col0 + 2 * t;
            }
#pragma unroll
            for (int n = 0; n < D / DQ_COL_SPLITS / 8; n += 2) {  // the slice's n8 tiles
                float dq[2][4] = {};
#pragma unroll
                for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
                    uint32_t kf[4];
                    ldmatrix_x4_trans(kf, smem_addr(k_smem + swizzled_step_rows<D>(swizzled_step_cols(bt_dq0, n / 2), 2 * kk)));
                    mma_m16n8k16<T>(dq[0], ds_a[kk], kf[0], kf[1]);
                    mma_m16n8k16<T>(dq[1], ds_a[kk], kf[2], kf[3]);
                }
#pragma unroll
                for (int c = 0; c < 2; ++c)
#pragma unroll
                    for (int r = 0; r < 2; ++r)
                        if (row_valid[r]) red_add_v2_f32(dq_row[r] + (n + c) * 8, make_float2(dq[c][2 * r], dq[c][2 * r + 1]));
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
    }
    cp_async_wait<0>();  // no copy may still be landing when the block exits

    // dK and dV of the warp's 16 keys, summed over every query row of every head of the
    // group: written once, dK times the scale, rows past seqlen_k not at all.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int j = kv_start + warp * 16 + g + 8 * r;
        if (j >= p.seqlen_k) continue;
        T* dk = static_cast<T*>(bp.dk) + kv_row_offset(p, b, j, kv_head) + 2 * t;
        T* dv = static_cast<T*>(bp.dv) + kv_row_offset(p, b, j, kv_head) + 2 * t;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            *reinterpret_cast<uint32_t*>(dk + n * 8) = pack2<T>(dk_rmem[n][2 * r] * p.scale, dk_rmem[n][2 * r + 1] * p.scale);
            *reinterpret_cast<uint32_t*>(dv + n * 8) = pack2<T>(dv_rmem[n][2 * r], dv_rmem[n][2 * r + 1]);
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
