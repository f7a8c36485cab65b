// hopper/backward_tiles.cuh: what the roles of the Hopper backward share: its tensor maps,
// its shared memory (K and V once; a ring of Q, dO and their rows' LSE and D; dS^T; the
// fp32 dQ tile), the mbarriers of the ring and the named barriers of dS and dQ.
// Book: "Stage 23: the backward on Hopper", sections "The roles" and "Shared memory and
// registers".
#pragma once
#include <stdint.h>

#include "../backward.cuh"
#include "../common.cuh"
#include "../mbarrier.cuh"
#include "../timeline.cuh"
#include "../tma.cuh"
#include "pipeline.cuh"

namespace flashlab {

// ANCHOR: tensor_maps
// Q, K, V and dO, as the harness passes them after BwdParams (harness/src/tensor_map.rs:
// BackwardTensorMaps): Q and dO in boxes of BLOCK_M query rows, K and V of BLOCK_N keys.
struct BwdTensorMaps {
    TensorMap q, k, v, d_o;
};
static_assert(sizeof(BwdTensorMaps) == 512, "harness/src/tensor_map.rs passes 4 x 128 bytes");
// ANCHOR_END: tensor_maps

// ANCHOR: named_barriers
// The named barriers (named_barrier.cuh); 0 is __syncthreads, and 1 .. 4 are the forward's
// (hopper/turns.cuh), left alone so that no id means two things in the headers.
enum BwdNamedBarrier : int {
    DS_WRITTEN = 5,  // both MMA warpgroups have stored their dS^T rows: dQ = dS K may read them
    DQ_FULL = 6,     // the MMA warpgroups have written the fp32 dQ tile: the writer may add it
    DQ_EMPTY = 7,    // the writer's bulk reduce has read the dQ tile: it may be written again
    KV_READ = 8,     // both MMA warpgroups' last products are complete: K's and V's tiles may stage dK and dV
};
constexpr int MMA_THREADS = 2 * 128;          // DS_WRITTEN and KV_READ: the two MMA warpgroups
constexpr int DQ_THREADS = MMA_THREADS + 32;  // DQ_FULL and DQ_EMPTY: and the writer warp
// ANCHOR_END: named_barriers

// ANCHOR: barriers
// The mbarriers, plain data in static shared memory. K and V arrive once, on kv_full. The
// ring's full barrier of a slot counts the 32 lanes of the load warp, each of which stores
// some of the slot's LSE and D before it arrives, and lane 0's arrival also expects the
// bytes of Q and dO; its empty barrier counts every thread of the two MMA warpgroups, each
// of which reads some of the slot's LSE and D before it arrives (not one lane a warp, as
// Pipeline::consumer_release arrives for slots that only wgmma reads).
template <int SLOTS>
struct BwdBarriers {
    uint64_t kv_full;
    Pipeline<SLOTS> qdo;
    __device__ __forceinline__ void init() {
        mbarrier_init(&kv_full, 1);
#pragma unroll
        for (int i = 0; i < SLOTS; ++i) {
            mbarrier_init(&qdo.full[i], 32);
            mbarrier_init(&qdo.empty[i], MMA_THREADS);
        }
        mbarrier_init_fence();
    }
};
// ANCHOR_END: barriers

// ANCHOR: dq_tile
// Where dQ's element (row, col) sits in the fp32 tile, and in its global accumulator, which
// keeps the same layout so that one bulk copy adds a whole tile: rows of D floats, each
// 8-float group of a row XORed with the row mod 4. An MMA thread stores float2s of rows g
// and g + 8 at columns 8 n + 2 t; unswizzled, the 4 rows of a half-warp's store would fall
// on the same 8 banks (rows are 128 or 256 words apart), swizzled they cover all 32.
template <int D>
FL_HOST_DEVICE int dq_tile_offset(int row, int col) {
    return row * D + (col ^ ((row & 3) << 3));
}
// ANCHOR_END: dq_tile

// ANCHOR: shared_tiles
// The tiles, carved out of the 1024-byte aligned dynamic shared memory, each a multiple of
// 1024 bytes (the 128-byte swizzle's period), for BLOCK_M any multiple of 64 query rows (64
// at head dim 128, 128 at 64): K and V [D/64][BLOCK_N][64]; SLOTS slots of Q and of dO
// [D/64][BLOCK_M][64]; two buffers of dS^T [BLOCK_M/64][BLOCK_N][64] (keys as rows, the
// queries as boxes of 64 swizzled columns, box c at c x BLOCK_N x 64 elements, as
// tile_offset_tma<BLOCK_N> places them: step s writes buffer s % 2 while the other
// warpgroup may still read s - 1's); the fp32 dQ tile [BLOCK_M][D] (dq_tile_offset); last,
// SLOTS x [2][BLOCK_M] floats of row terms: each query row's LSE in log2 units, then its D.
template <typename T, int D, int BLOCK_M, int BLOCK_N, int SLOTS>
struct BwdSharedTiles {
    static constexpr int KV_TILE = BLOCK_N * D;  // elements
    static constexpr int Q_TILE = BLOCK_M * D;
    static constexpr int DS_TILE = BLOCK_N * BLOCK_M;
    static constexpr int BYTES = (2 * KV_TILE + 2 * SLOTS * Q_TILE + 2 * DS_TILE) * sizeof(T) + (BLOCK_M * D + SLOTS * 2 * BLOCK_M) * 4;
    static_assert(BLOCK_M % 64 == 0, "dS^T's rows are whole 64-column boxes of queries");
    static_assert(KV_TILE * sizeof(T) % 1024 == 0 && Q_TILE * sizeof(T) % 1024 == 0 && DS_TILE * sizeof(T) % 1024 == 0 &&
                      BLOCK_M * D * 4 % 1024 == 0,
                  "every tile starts on a 1024-byte boundary");
    T* k;
    T* v;
    T* q;
    T* d_o;
    T* ds;
    float* dq;
    float* rows;
    BwdBarriers<SLOTS>* bar;
    __device__ BwdSharedTiles(BwdBarriers<SLOTS>& barriers)
        : k(reinterpret_cast<T*>(dynamic_smem_1024())),
          v(k + KV_TILE),
          q(v + KV_TILE),
          d_o(q + SLOTS * Q_TILE),
          ds(d_o + SLOTS * Q_TILE),
          dq(reinterpret_cast<float*>(ds + 2 * DS_TILE)),
          rows(dq + BLOCK_M * D),
          bar(&barriers) {}
    __device__ __forceinline__ T* q_slot(PipelineState<SLOTS> st) const { return q + st.index * Q_TILE; }
    __device__ __forceinline__ T* do_slot(PipelineState<SLOTS> st) const { return d_o + st.index * Q_TILE; }
    __device__ __forceinline__ float* rows_slot(PipelineState<SLOTS> st) const { return rows + st.index * 2 * BLOCK_M; }
    __device__ __forceinline__ T* ds_buffer(int step) const { return ds + (step % 2) * DS_TILE; }
};
// ANCHOR_END: shared_tiles

}  // namespace flashlab

// Exports `body<T, D>(p, maps)` like FLASHLAB_EXPORT_BACKWARD (backward.cuh), for the main
// kernel, which also takes the tensor maps: by value, `__grid_constant__`, so they stay in
// parameter memory where the copy instructions read them.
#define FLASHLAB_EXPORT_BACKWARD_TMA_ONE(prefix, body, T, tname, D, threads)                                       \
    extern "C" __global__ void __launch_bounds__(threads, 1)                                                       \
        prefix##_##tname##_d##D(const flashlab::BwdParams p, const __grid_constant__ flashlab::BwdTensorMaps maps) { \
        body<T, D>(p, maps);                                                                                       \
    }
#define FLASHLAB_EXPORT_BACKWARD_TMA(prefix, body, threads)                    \
    FLASHLAB_EXPORT_BACKWARD_TMA_ONE(prefix, body, __nv_bfloat16, bf16, 64, threads)  \
    FLASHLAB_EXPORT_BACKWARD_TMA_ONE(prefix, body, __nv_bfloat16, bf16, 128, threads) \
    FLASHLAB_EXPORT_BACKWARD_TMA_ONE(prefix, body, __half, f16, 64, threads)          \
    FLASHLAB_EXPORT_BACKWARD_TMA_ONE(prefix, body, __half, f16, 128, threads)
// Its timeline variants, `body<__nv_bfloat16, D, true>`: `<prefix>_timeline_bf16_d<D>` at
// both head dims (timeline.cuh).
#define FLASHLAB_EXPORT_BACKWARD_TIMELINE_TMA(prefix, body, threads)                                                      \
    FLASHLAB_EXPORT_TIMELINE_TMA_WITH(flashlab::BwdParams, flashlab::BwdTensorMaps, prefix, body, 64, threads, 1) \
    FLASHLAB_EXPORT_TIMELINE_TMA_WITH(flashlab::BwdParams, flashlab::BwdTensorMaps, prefix, body, 128, threads, 1)
