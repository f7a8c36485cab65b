// tile_copy.cuh: the global-to-shared copy of a swizzled tile by cp.async that stages 6-9
// share, written once. Stage 5 copies with a plain loop (its own load_tile_async); stage 6
// trims that loop to this one. Book: "Stage 6: fewer instructions per mma".
#pragma once
#include "mma.cuh"
#include "smem_tile.cuh"

namespace flashlab {

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
    constexpr int CHUNKS = D / 8;  // 16-byte chunks per row
    constexpr int ROW_STEP = THREADS / CHUNKS;
    static_assert(THREADS % CHUNKS == 0 && ROW_STEP % 8 == 0 && ROWS % ROW_STEP == 0, "whole rows per step, 8-row aligned");
    const int r0 = threadIdx.x / CHUNKS, c = (threadIdx.x % CHUNKS) * 8;
    const uint32_t dst0 = smem_addr(tile_smem + tile_offset_swizzled<D>(r0, c));
    const T* src = gmem + r0 * stride + c;
    const long long src_step = ROW_STEP * stride;
    if (valid >= ROWS) {
#pragma unroll
        for (int i = 0; i < ROWS / ROW_STEP; ++i, src += src_step) cp_async_16(dst0 + 2 * swizzled_step_rows<D>(0, i * ROW_STEP / 8), src);
    } else {
#pragma unroll
        for (int i = 0; i < ROWS / ROW_STEP; ++i, src += src_step) {
            const bool in_range = r0 + i * ROW_STEP < valid;
            cp_async_16(dst0 + 2 * swizzled_step_rows<D>(0, i * ROW_STEP / 8), in_range ? src : gmem, in_range);
        }
    }
}
// ANCHOR_END: load_tile_async

}  // namespace flashlab
