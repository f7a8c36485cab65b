// hopper/epilogue.cuh: O and the LSE leave the block. Each consumer warpgroup writes its
// normalized rows of O into the shared tile Q arrived in (only its own wgmmas read those
// rows, and they are complete) and its LSE straight to global memory; once every
// consumer has, one thread stores the whole tile with TMA (rows past seqlen_q are dropped).
// Book: "Stage 10: TMA and mbarriers", section "O through shared memory and one TMA store".
#pragma once
#include "../common.cuh"
#include "../fragments.cuh"
#include "../mma.cuh"
#include "../smem_tile.cuh"
#include "../tma.cuh"
#include "scheduler.cuh"

namespace flashlab {

// ANCHOR: epilogue_write
// This thread's two rows: O times `o_factor` (1 / the row sum) into the shared tile, and the
// LSE, by one lane of each quad. Then the fence that lets the TMA store read the writes.
template <typename T, int D, int BLOCK_Q>
__device__ __forceinline__ void epilogue_write(const AttnParams& p, T* o_smem, const float (&o)[D / 2], const float (&o_factor)[2],
                                               const float (&lse)[2], const int (&row)[2], const BlockWork& w) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            const int col = n * 8 + mma_m16n8_c(lane, 0).col;
            *reinterpret_cast<uint32_t*>(o_smem + tile_offset_tma<BLOCK_Q>(row[r], col)) =
                pack2<T>(o[4 * n + 2 * r] * o_factor[r], o[4 * n + 2 * r + 1] * o_factor[r]);
        }
        const int q_row = w.q_start + row[r];
        if (q_row < p.seqlen_q && quad_lane(lane) == 0) p.lse[lse_index(p, w.b, w.h, q_row)] = lse[r];
    }
    fence_proxy_async_smem();
}
// ANCHOR_END: epilogue_write

// ANCHOR: epilogue_store
// After a barrier among the writers: one thread stores the tile, D / 64 boxes of 64
// columns, and waits until the copy has read shared memory before the block may exit.
template <typename T, int D, int BLOCK_Q>
__device__ __forceinline__ void epilogue_store(const AttnTensorMaps& maps, const T* o_smem, const BlockWork& w) {
#pragma unroll
    for (int c = 0; c < D / 64; ++c) tma_store_4d(&maps.o, o_smem + c * BLOCK_Q * 64, c * 64, w.h, w.q_start, w.b);
    tma_store_commit();
    tma_store_wait_read();
}
// ANCHOR_END: epilogue_store

}  // namespace flashlab
