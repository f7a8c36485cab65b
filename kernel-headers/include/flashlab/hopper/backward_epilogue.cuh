// hopper/backward_epilogue.cuh: what leaves a block of the Hopper backward. dQ, once per
// query block: the writer warp adds the fp32 tile the MMA warpgroups wrote to dQ's global
// accumulator with one bulk reduce-add, in the deterministic order when asked. dK and dV,
// once per block, after the last query block: from the MMA warpgroups' registers, through
// shared memory.
// Book: "Stage 23: the backward on Hopper", section "dQ by bulk reduce-add".
#pragma once
#include "../atomic.cuh"
#include "../backward.cuh"
#include "../bulk_reduce.cuh"
#include "../common.cuh"
#include "../fragments.cuh"
#include "../mma.cuh"
#include "../named_barrier.cuh"
#include "../smem_tile.cuh"
#include "../timeline.cuh"
#include "../tma.cuh"
#include "backward_scheduler.cuh"
#include "backward_tiles.cuh"

namespace flashlab {

// ANCHOR: dq_accum
// dQ's fp32 accumulator: [batch][heads][seqlen_q rounded up to DQ_ACCUM_ROWS][D], each row
// in dq_tile_offset's order, so that query block m of head h is one contiguous run of
// BLOCK_M x D floats, the last block's padding rows included (they only ever get zeros).
constexpr int DQ_ACCUM_ROWS = 128;  // harness/src/backward/mod.rs: DQ_ACCUM_ROWS
template <int D>
__device__ __forceinline__ float* dq_accum_rows(const BwdParams& bp, int b, int h, int row0) {
    const AttnParams& p = bp.fwd;
    const int padded = ceil_div(p.seqlen_q, DQ_ACCUM_ROWS) * DQ_ACCUM_ROWS;
    return bp.dq_accum + ((static_cast<long long>(b) * p.heads + h) * padded + row0) * D;
}
// ANCHOR_END: dq_accum

// ANCHOR: dq_writer
// The writer, one warp of the producer warpgroup, once per step: wait until the MMA
// warpgroups have written the dQ tile (DQ_FULL); lane 0 adds it into the accumulator with
// one cp.reduce.async.bulk, the L2 cache doing the adds a whole tile at a time where stage
// 22's threads sent one atomic each; once the copy engine has read the tile, hand it back
// (DQ_EMPTY). The tile starts free: the warp arrives once before the first step, and not
// after the last, so every barrier phase is completed by the same number of arrivals.
// Deterministic (stage 22's order, key block by key block): before its add, lane 0 waits until
// the query block's counter says every key block before this one has added its share; after
// it, it waits until the add is done in global memory and counts its own.
// The timeline build records the warp's lane 0 in slot 1 (hopper_backward.cu's roles).
template <int D, int BLOCK_M, bool TIMELINE = false>
__device__ __forceinline__ void dq_writer(const BwdParams& bp, const float* dq_tile, const BwdWork& w) {
    const AttnParams& p = bp.fwd;
    Timeline<TIMELINE> tl(p, 1, 32);
    const bool lane0 = threadIdx.x % 32 == 0;
    const int steps = w.steps();
    named_barrier_arrive(DQ_EMPTY, DQ_THREADS);
    for_each_query_block(w, [&](int h, int m, int step) {
        int* sem = bp.dq_semaphore + (static_cast<long long>(w.b) * p.heads + h) * ceil_div(p.seqlen_q, 16) + m;
        FL_PHASE(tl, Phase::Sync, step, named_barrier_sync(DQ_FULL, DQ_THREADS));
        FL_PHASE(tl, Phase::DqReduce, step, if (lane0) {
            if (bp.deterministic) {
                while (load_acquire_gpu(sem) != w.n_block) {
                }
                fence_proxy_async_global();  // the earlier blocks' adds, seen by this one's
            }
            bulk_reduce_add_f32(dq_accum_rows<D>(bp, w.b, h, m * BLOCK_M), dq_tile, BLOCK_M * D * sizeof(float));
            tma_store_commit();
            tma_store_wait_read();
        });
        __syncwarp();
        if (step + 1 < steps) named_barrier_arrive(DQ_EMPTY, DQ_THREADS);
        if (lane0 && bp.deterministic) {
            tma_store_wait_done();
            fence_proxy_async_global();  // the add, done, before the count that publishes it
            atomic_add_acq_rel_gpu(sem, 1);
        }
    });
    if (lane0) tma_store_wait_done();
    tl.clock();
}
// ANCHOR_END: dq_writer

// ANCHOR: store_dk_dv
// dK (times the scale) and dV of the warpgroup's keys, summed over every query row of every
// head of the group, written once, after all the block's steps. Straight from the
// accumulator, a store is 4 bytes a lane and 16 bytes of each of 8 rows: half a 32-byte
// sector a row, 64 stores a thread at D = 128, and the block's last 5 µs went to them
// (book: "The epilogue through shared memory"). So each warp stages its 16 keys' rows in
// shared memory first, in K's and V's tiles (the caller makes sure no product reads them
// any more), and reads them back 16 bytes a lane: whole rows a store, 16 stores a thread at
// D = 128, 8 at D = 64. The staged tile is [BLOCK_N][D] in stage 4's swizzle
// (tile_offset_swizzled: each 16-byte chunk XORed with the row mod 8), so the 8 rows of a
// 4-byte store fall on 8 different chunks, all 32 banks, and so do the 8 lanes that read one
// row's chunks (layout-viz's tests check both). A warp reads back only rows it wrote, so a
// __syncwarp() orders the two. Keys past seqlen_k are not written.
template <typename T, int D>
__device__ __forceinline__ void store_dk_dv(const BwdParams& bp, const float (&dk)[D / 2], const float (&dv)[D / 2], int key0,
                                            const BwdWork& w, T* dk_stage, T* dv_stage) {
    const AttnParams& p = bp.fwd;
    constexpr int CHUNKS = D / 8;  // 16-byte chunks of a row
    const int lane = threadIdx.x % 32;
    const int row0 = key0 - w.n_start + threadIdx.x % 128 / 32 * 16;  // the warp's first key, in the block
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const RowCol rc = mma_m16n8_c(lane, 2 * r);  // rows g and g + 8, columns 8 n + 2 t, + 1
        const int row = row0 + rc.row;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            const int at = tile_offset_swizzled<D>(row, 8 * n + rc.col);
            *reinterpret_cast<uint32_t*>(dk_stage + at) = pack2<T>(dk[4 * n + 2 * r] * p.scale, dk[4 * n + 2 * r + 1] * p.scale);
            *reinterpret_cast<uint32_t*>(dv_stage + at) = pack2<T>(dv[4 * n + 2 * r], dv[4 * n + 2 * r + 1]);
        }
    }
    __syncwarp();
    static_assert(16 * CHUNKS % 32 == 0, "whole rounds of the warp's 16 rows");
#pragma unroll
    for (int i = 0; i < 16 * CHUNKS / 32; ++i) {
        const int row = row0 + (i * 32 + lane) / CHUNKS, col = lane % CHUNKS * 8;
        const int j = w.n_start + row;
        if (j >= p.seqlen_k) continue;
        const long long to = kv_row_offset(p, w.b, j, w.kv_head) + col;
        const int from = tile_offset_swizzled<D>(row, col);
        *reinterpret_cast<uint4*>(static_cast<T*>(bp.dk) + to) = *reinterpret_cast<const uint4*>(dk_stage + from);
        *reinterpret_cast<uint4*>(static_cast<T*>(bp.dv) + to) = *reinterpret_cast<const uint4*>(dv_stage + from);
    }
}
// ANCHOR_END: store_dk_dv

}  // namespace flashlab
