// hopper/backward_mainloop.cuh: an MMA warpgroup of the Hopper backward: the five products
// on wgmma, for its 64 of the block's BLOCK_N keys and BLOCK_M query rows a step (64 at head
// dim 128; 128 at head dim 64, FlashAttention-3's kBlockM there), and the registers they
// live in. Like stage 22's warps it works transposed, key-major, so that its keys are the M
// rows of four of the products and dK, dV stay in its registers for the whole launch:
//   S^T  = K Q^T      SS: A its K rows (K-major), B Q (K-major), as the forward's S = Q K^T
//   dP^T = V dO^T     SS: the same with V and dO
//   dV  += P^T dO     RS: A P^T from S^T's registers, B dO MN-major, as the forward's P V
//   dK  += dS^T Q     RS: A dS^T from dP^T's registers, B Q MN-major
//   dQ   = dS K       SS, both MN-major: A dS from the dS^T both warpgroups stored, B K;
//                     each warpgroup takes D / 2 of dQ's columns (BLOCK_M 64) or 64 of its
//                     rows (BLOCK_M 128) over all BLOCK_N keys
// At BLOCK_M 128, S^T and dP^T are 64 keys x 128 queries (one wgmma N = 128 each k-step),
// dV and dK take 8 k-steps of 16 queries, and dQ's split by rows makes each warpgroup's A
// one 64-query box of the dS^T tile and its B all of K.
// Book: "Stage 23: the backward on Hopper", sections "The roles" and "Shared memory and
// registers".
#pragma once
#include "../common.cuh"
#include "../fragments.cuh"
#include "../mma.cuh"
#include "../smem_tile.cuh"
#include "../wgmma.cuh"
#include "backward_tiles.cuh"

namespace flashlab {

// ANCHOR: backward_mma
// Warpgroup `wg` (0 or 1) owns keys 64 wg .. 64 wg + 63 of the block's; warp w of it, as in
// an m16n8 fragment, rows 16 w .. 16 w + 15 of each product's M. Per thread, at D = 128
// (BLOCK_M 64): dK and dV 64 floats each; S^T and dP^T (64 keys x BLOCK_M queries) 32 each;
// P^T and dS^T packed as A operands 16 registers each; its half of dQ (64 queries x D / 2)
// 32. At D = 64 with BLOCK_M 128: dK and dV 32 each; S^T and dP^T 64 each; P^T and dS^T 32
// each; its rows of dQ (64 queries x D) 32.
template <typename T, int D, int BLOCK_M, int BLOCK_N>
struct BackwardMma {
    static constexpr int KEYS = 64;  // a warpgroup's keys: the M of S^T, dP^T, dV and dK
    static_assert(BLOCK_N == 2 * KEYS, "two MMA warpgroups share the block's keys");
    static_assert(BLOCK_M == 64 || BLOCK_M == 128, "one or two 64-query boxes a step");
    // dQ = dS K, BLOCK_M x D, split between the two warpgroups: by columns at BLOCK_M 64
    // (each all 64 rows, D / 2 columns), by rows at BLOCK_M 128 (each 64 rows, all D).
    static constexpr bool DQ_BY_ROWS = BLOCK_M == 128;
    static constexpr int DQ_COLS = DQ_BY_ROWS ? D : D / 2;  // the N of this warpgroup's dQ wgmma
    static_assert(DQ_COLS == 32 || DQ_COLS == 64, "wgmma_ss_mn spells out N = 32 and 64");
    // Where P^T is packed into dV's A operand. BLOCK_M 64: in p_from_s, so that dV += P^T dO
    // runs while dS^T is computed. BLOCK_M 128: in ds_from_dp, after dS^T, and dV is issued
    // after it (FlashAttention-3's order): S^T's floats (P^T, which dS^T reads), P^T packed
    // and dP^T, 64 + 32 + 64 registers with dK and dV's 64 beside them, left ptxas too few
    // of the 240 (152 bytes of spills, and wgmma serialized).
    static constexpr bool PACK_P_LATE = BLOCK_M == 128;
    // Whether dQ = dS K is issued before dK += dS^T Q, so that dQ's tile is stored for the
    // writer while dK runs (FlashAttention-3's order). BLOCK_M 64: yes. BLOCK_M 128: no, dK
    // is issued before the warpgroups meet, so that it runs while they wait for each other.
    static constexpr bool DQ_FIRST = BLOCK_M == 64;
    // ANCHOR: accumulators
    float dk[D / 2] = {};
    float dv[D / 2] = {};
    float s[BLOCK_M / 2];             // S^T, then P^T in place
    float dp[BLOCK_M / 2];            // dP^T, then dS^T in place
    uint32_t p[BLOCK_M / 16][4];      // P^T as the A operand of dV += P^T dO
    uint32_t ds[BLOCK_M / 16][4];     // dS^T as the A operand of dK += dS^T Q
    float dq[DQ_COLS / 2];            // dQ's rows 64 wg .. 64 wg + 63 (BLOCK_M 128) or its columns wg D / 2 .. (wg + 1) D / 2 - 1
    // ANCHOR_END: accumulators
    int wg;

    __device__ explicit BackwardMma(int warpgroup) : wg(warpgroup) {}

    // The block key of this thread's accumulator row r (rows g and g + 8 of its warp's 16),
    // and the query (column) of its S^T / dP^T element i.
    __device__ __forceinline__ int key(int r) const {
        return wg * KEYS + threadIdx.x % 128 / 32 * 16 + quad_group(threadIdx.x % 32) + 8 * r;
    }
    __device__ __forceinline__ static int query_of(int i) { return (i / 4) * 8 + mma_m16n8_c(threadIdx.x % 32, i % 4).col; }

    // ANCHOR: descriptors
    // K-major A: k-step kk (16 columns of D) of this warpgroup's 64 rows of K or V.
    __device__ __forceinline__ uint64_t kv_rows_desc(const T* tile, int kk) const {
        return wgmma_desc_sw128(tile + (kk / 4) * BLOCK_N * 64 + wg * KEYS * 64 + (kk % 4) * 16, 16, 1024);
    }
    // K-major B: k-step kk of the slot's Q or dO, its BLOCK_M rows as N.
    __device__ __forceinline__ static uint64_t qdo_desc(const T* tile, int kk) {
        return wgmma_desc_sw128(tile + (kk / 4) * BLOCK_M * 64 + (kk % 4) * 16, 16, 1024);
    }
    // MN-major B (as V's in the forward's P V): k-step kk (16 query rows) of Q or dO, D as N,
    // its 64-column boxes BLOCK_M rows apart.
    __device__ __forceinline__ static uint64_t qdo_mn_desc(const T* tile, int kk) {
        return wgmma_desc_sw128(tile + kk * 16 * 64, BLOCK_M * 64 * sizeof(T), 1024);
    }
    // MN-major A: k-step kk (16 keys) of dS^T's tile, 64 queries (one box) as M: box 0 at
    // BLOCK_M 64, box wg (this warpgroup's rows of dQ) at BLOCK_M 128.
    __device__ __forceinline__ uint64_t ds_desc(const T* ds_tile, int kk) const {
        const int box = DQ_BY_ROWS ? wg : 0;
        return wgmma_desc_sw128(ds_tile + box * BLOCK_N * 64 + kk * 16 * 64, BLOCK_N * 64 * sizeof(T), 1024);
    }
    // MN-major B: k-step kk (16 keys) of K, this warpgroup's DQ_COLS columns as N. At
    // BLOCK_M 128 (D = 64) all of them, the one box. At BLOCK_M 64: at D = 128 box wg; at
    // D = 64 half a box, 64 bytes into each 128-byte row, which the swizzle (applied to the
    // address bits) handles as it does a K-major k-step's 32 bytes.
    __device__ __forceinline__ uint64_t k_mn_desc(const T* k_tile, int kk) const {
        const int col = DQ_BY_ROWS ? 0 : wg * (D / 2);
        return wgmma_desc_sw128(k_tile + (col / 64) * BLOCK_N * 64 + col % 64 + kk * 16 * 64, BLOCK_N * 64 * sizeof(T), 1024);
    }
    // ANCHOR_END: descriptors

    // ANCHOR: products
    // S^T = K Q^T and dP^T = V dO^T: D / 16 wgmmas each, one group each.
    __device__ __forceinline__ void s_issue(const T* k_tile, const T* q_tile) { rows_times_tile_t(s, k_tile, q_tile); }
    __device__ __forceinline__ void dp_issue(const T* v_tile, const T* do_tile) { rows_times_tile_t(dp, v_tile, do_tile); }
    __device__ __forceinline__ void rows_times_tile_t(float (&acc)[BLOCK_M / 2], const T* a_tile, const T* b_tile) {
        wgmma_fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) wgmma_ss<T, BLOCK_M>(acc, kv_rows_desc(a_tile, kk), qdo_desc(b_tile, kk), kk > 0);
        wgmma_commit();
    }
    // dV += P^T dO and dK += dS^T Q: BLOCK_M / 16 wgmmas each, A from registers, one group each.
    __device__ __forceinline__ void dv_issue(const T* do_tile) { packed_times_tile(dv, p, do_tile); }
    __device__ __forceinline__ void dk_issue(const T* q_tile) { packed_times_tile(dk, ds, q_tile); }
    __device__ __forceinline__ void packed_times_tile(float (&acc)[D / 2], const uint32_t (&a)[BLOCK_M / 16][4], const T* b_tile) {
        wgmma_fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_M / 16; ++kk) wgmma_rs_mn<T, D>(acc, a[kk], qdo_mn_desc(b_tile, kk), true);
        wgmma_commit();
    }
    // dQ = dS K, this warpgroup's half of the rows or of the columns: BLOCK_N / 16 wgmmas over
    // every key of the block, both warpgroups' dS^T rows, one group.
    __device__ __forceinline__ void dq_issue(const T* ds_tile, const T* k_tile) {
        wgmma_fence_operands(dq);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; ++kk) wgmma_ss_mn<T, DQ_COLS>(dq, ds_desc(ds_tile, kk), k_mn_desc(k_tile, kk), kk > 0);
        wgmma_commit();
    }
    // The groups complete in the order they were issued: S^T, dP^T, dV, dQ, dK with DQ_FIRST
    // (BLOCK_M 64), and S^T, dP^T, dV, dK, dQ without it, where dV is issued only once dP^T is
    // complete (PACK_P_LATE).
    __device__ __forceinline__ void wait_s() {  // S^T is complete (dP^T may run)
        wgmma_wait<1>();
        wgmma_fence_operands(s);
    }
    __device__ __forceinline__ void wait_dp() {  // dP^T is complete (dV may run, if issued before it)
        wgmma_wait<PACK_P_LATE ? 0 : 1>();
        wgmma_fence_operands(dp);
    }
    __device__ __forceinline__ void wait_dq() {  // DQ_FIRST: dV and dQ are complete (dK, issued after dQ, may run)
        wgmma_wait<1>();
        wgmma_fence_operands(dv);
        wgmma_fence_operands(dq);
    }
    __device__ __forceinline__ void wait_all() {  // dV, dK and dQ are complete
        wgmma_wait<0>();
        wgmma_fence_operands(dv);
        wgmma_fence_operands(dk);
        wgmma_fence_operands(dq);
    }
    // ANCHOR_END: products

    // ANCHOR: recompute_p
    // P^T, recomputed from S^T and the rows' LSE with one exponential, as stage 22 does it,
    // and packed as dV's A operand: S^T's accumulator and the A layout agree register for
    // register, as in the forward's P V. The query of element i is a column here, so its LSE
    // is read per column, two at a time from the slot's row terms. MASKED (stage 8's
    // masked_or_not): keys past seqlen_k, or causal past the row's last key, get P = 0; key
    // rows past seqlen_k are zeros from TMA, but exp2(0 - LSE) is not 0.
    template <bool MASKED>
    __device__ __forceinline__ void p_from_s(const AttnParams& params, const float* lse_log2, int n_start, int q_start) {
#pragma unroll
        for (int n = 0; n < BLOCK_M / 8; ++n) {
            const float2 lse = *reinterpret_cast<const float2*>(lse_log2 + query_of(4 * n));
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float prob = fast_exp2(fmaf(s[4 * n + e], params.scale_log2, -(e % 2 ? lse.y : lse.x)));
                if constexpr (MASKED) {
                    const int j = n_start + key(e / 2), i = q_start + query_of(4 * n + e);
                    if (j >= params.seqlen_k || (params.causal && j >= causal_key_end(params, i))) prob = 0.f;
                }
                s[4 * n + e] = prob;
            }
        }
        if constexpr (!PACK_P_LATE) pack_a(p, s);
    }
    // ANCHOR_END: recompute_p

    // ANCHOR: ds
    // dS^T = P^T o (dP^T - D), in place, D per query (a column here); packed as dK's A
    // operand, rounded to the dtype once, the same values dQ reads from shared memory.
    __device__ __forceinline__ void ds_from_dp(const float* delta) {
#pragma unroll
        for (int n = 0; n < BLOCK_M / 8; ++n) {
            const float2 d = *reinterpret_cast<const float2*>(delta + query_of(4 * n));
#pragma unroll
            for (int e = 0; e < 4; ++e) dp[4 * n + e] = s[4 * n + e] * (dp[4 * n + e] - (e % 2 ? d.y : d.x));
        }
        if constexpr (PACK_P_LATE) pack_a(p, s);
        pack_a(ds, dp);
    }
    // This warpgroup's 64 rows of the dS^T tile [BLOCK_N keys][BLOCK_M queries], swizzled as a
    // TMA box: each register of ds holds two adjacent queries of one key, one 32-bit store;
    // the 8 rows of a store hit 8 different 16-byte chunks, so no bank is hit twice.
    // The addresses: tile_offset_tma<BLOCK_N>(key(r), query_of(4 n)) in bytes is
    // row x 128 + ((n mod 8) XOR (row mod 8)) x 16 + 4 t + (n / 8) x BLOCK_N x 128, and key(1)
    // is key(0) + 8, the same row mod 8. So one base, key(0)'s row with its swizzle applied,
    // gives all of them: XOR n mod 8 into bits 4..6, add the box and 8 rows as immediates. The
    // tile is 1024-byte aligned, so no carry reaches bits 4..6. Written as tile_offset_tma
    // per store, ptxas kept 16 addresses a warpgroup in registers at BLOCK_M 128.
    __device__ __forceinline__ void store_ds(T* ds_tile) const {
        static_assert(sizeof(T) == 2, "128-byte rows of 64 elements");
        const int row = key(0);
        const uint32_t base = smem_addr(ds_tile) + row * 128 + (row % 8) * 16 + (threadIdx.x % 4) * 4;
#pragma unroll
        for (int n = 0; n < BLOCK_M / 8; ++n)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const uint32_t addr = (base ^ ((n % 8) * 16)) + (n / 8) * BLOCK_N * 128 + r * 8 * 128;
                *static_cast<uint32_t*>(__cvta_shared_to_generic(addr)) = ds[n / 2][(n % 2) * 2 + r];
            }
    }
    // ANCHOR_END: ds

    // ANCHOR: store_dq
    // This warpgroup's part of dQ into the fp32 tile the writer adds to global memory: the
    // accumulator's 64 rows are queries 64 wg + (BLOCK_M 128) or all BLOCK_M = 64 queries,
    // its columns 8 n + 2 t, + 1 of all D (BLOCK_M 128) or of wg D / 2 + (BLOCK_M 64).
    __device__ __forceinline__ void store_dq(float* dq_tile) const {
        const int lane = threadIdx.x % 32;
        const int row0 = DQ_BY_ROWS ? wg * 64 : 0, col0 = DQ_BY_ROWS ? 0 : wg * (D / 2);
#pragma unroll
        for (int n = 0; n < DQ_COLS / 8; ++n)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const RowCol rc = mma_m16n8_c(lane, 2 * r);
                const int row = row0 + threadIdx.x % 128 / 32 * 16 + rc.row, col = col0 + n * 8 + rc.col;
                *reinterpret_cast<float2*>(dq_tile + dq_tile_offset<D>(row, col)) = make_float2(dq[4 * n + 2 * r], dq[4 * n + 2 * r + 1]);
            }
    }
    // ANCHOR_END: store_dq

    // A 64 x BLOCK_M accumulator as A fragments: k-step kk is its n8 tiles 2 kk and 2 kk + 1.
    __device__ __forceinline__ static void pack_a(uint32_t (&a)[BLOCK_M / 16][4], const float (&c)[BLOCK_M / 2]) {
#pragma unroll
        for (int kk = 0; kk < BLOCK_M / 16; ++kk)
#pragma unroll
            for (int n = 2 * kk; n < 2 * kk + 2; ++n)
#pragma unroll
                for (int r = 0; r < 2; ++r) a[kk][(n % 2) * 2 + r] = pack2<T>(c[4 * n + 2 * r], c[4 * n + 2 * r + 1]);
    }
};
// ANCHOR_END: backward_mma

}  // namespace flashlab
