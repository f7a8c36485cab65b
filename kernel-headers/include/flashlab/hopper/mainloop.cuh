// hopper/mainloop.cuh: a consumer warpgroup's two products on wgmma, S = Q K^T with both
// operands in shared memory and O += P V with P from registers, and the registers they
// live in. Issue and wait are separate calls, so a stage chooses how many product groups
// stay in flight (stage 16 keeps P V running under the softmax).
// Book: "Stage 11: wgmma", sections "The descriptor" and "P never touches shared memory".
#pragma once
#include "../common.cuh"
#include "../fragments.cuh"
#include "../mma.cuh"
#include "../wgmma.cuh"

namespace flashlab {

// ANCHOR: warpgroup_mma
// Warpgroup `wg` of the consumers owns query rows 64 wg .. 64 wg + 63 of the block's
// BLOCK_Q; inside it, warp w's accumulator rows are 16 w .. 16 w + 15, as in an m16n8
// fragment. Per thread: O's 64 x D block is D / 2 floats, S's 64 x BLOCK_KV block is
// BLOCK_KV / 2, and P, S as the A operand of P V, one 64 x 16 k-step per [kk].
template <typename T, int D, int BLOCK_Q, int BLOCK_KV>
struct WarpgroupMma {
    // ANCHOR: accumulators
    float o[D / 2] = {};
    float s[BLOCK_KV / 2];
    uint32_t p[BLOCK_KV / 16][4];
    // ANCHOR_END: accumulators
    const T* q_smem;  // [D/64][BLOCK_Q][64], 128-byte swizzled (TMA's layout)
    int wg;

    __device__ WarpgroupMma(const T* q, int warpgroup) : q_smem(q), wg(warpgroup) {}

    // The block-tile row of this thread's row r (r = 0, 1: rows g and g + 8 of its warp's 16).
    __device__ __forceinline__ int row(int r) const {
        return wg * 64 + threadIdx.x % 128 / 32 * 16 + quad_group(threadIdx.x % 32) + 8 * r;
    }

    // ANCHOR: descriptors
    // Descriptors of k-step kk (16 columns of D) of this warpgroup's Q rows and of a K tile:
    // 32 bytes further inside a 64-column box, a whole box further every 4 steps. And of
    // k-step kk (16 keys) of a V tile: 16 rows of 128 bytes further, its 64-column boxes
    // BLOCK_KV rows apart (the leading byte offset).
    __device__ __forceinline__ uint64_t q_desc(int kk) const {
        return wgmma_desc_sw128(q_smem + (kk / 4) * BLOCK_Q * 64 + wg * 64 * 64 + (kk % 4) * 16, 16, 1024);
    }
    __device__ __forceinline__ static uint64_t k_desc(const T* k_tile, int kk) {
        return wgmma_desc_sw128(k_tile + (kk / 4) * BLOCK_KV * 64 + (kk % 4) * 16, 16, 1024);
    }
    __device__ __forceinline__ static uint64_t v_desc(const T* v_tile, int kk) {
        return wgmma_desc_sw128(v_tile + kk * 16 * 64, BLOCK_KV * 64 * sizeof(T), 1024);
    }
    // ANCHOR_END: descriptors

    // ANCHOR: qk
    // S = Q K^T: D / 16 wgmmas into the same accumulators, committed as one group.
    __device__ __forceinline__ void qk_issue(const T* k_tile) {
        wgmma_fence_operands(s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) wgmma_ss<T, BLOCK_KV>(s, q_desc(kk), k_desc(k_tile, kk), kk > 0);
        wgmma_commit();
    }
    // ANCHOR_END: qk
    // ANCHOR: pv
    // O += P V: BLOCK_KV / 16 wgmmas, A (P) from registers, B (V) from shared memory, one
    // group. The fences make the registers just written by ordinary instructions (P, and O
    // if it was rescaled) part of what the wgmmas read.
    __device__ __forceinline__ void pv_issue(const T* v_tile) {
        wgmma_fence_operands(o);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) wgmma_rs_mn<T, D>(o, p[kk], v_desc(v_tile, kk), true);
        wgmma_commit();
    }
    // ANCHOR_END: pv
    // ANCHOR: wait
    // Wait until at most N groups are in flight; then S (or O) may be read.
    template <int N>
    __device__ __forceinline__ void wait_s() {
        wgmma_wait<N>();
        wgmma_fence_operands(s);
    }
    template <int N>
    __device__ __forceinline__ void wait_o() {
        wgmma_wait<N>();
        wgmma_fence_operands(o);
    }
    // ANCHOR_END: wait
    // ANCHOR: p_from_s
    // S's accumulator layout and P's A-operand layout agree register for register (both are
    // mma.sync's per warp), so P is S, exponentiated, packed in place: keys 16 kk .. 16 kk + 15
    // are S's column blocks 2 kk and 2 kk + 1.
    __device__ __forceinline__ void p_from_s() {
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk)
#pragma unroll
            for (int n = 2 * kk; n < 2 * kk + 2; ++n)
#pragma unroll
                for (int r = 0; r < 2; ++r) p[kk][(n % 2) * 2 + r] = pack2<T>(s[4 * n + 2 * r], s[4 * n + 2 * r + 1]);
    }
    // ANCHOR_END: p_from_s
};
// ANCHOR_END: warpgroup_mma

}  // namespace flashlab
