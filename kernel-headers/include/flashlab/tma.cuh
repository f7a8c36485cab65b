// tma.cuh: the tensor memory accelerator (TMA), one wrapper per PTX instruction. One
// thread names a box of a tensor by its coordinates; the copy engine moves it between
// global and shared memory, swizzling it on the way, and reports on an mbarrier.
// Book: "Stage 10: TMA and mbarriers".
#pragma once
#include <stdint.h>

#include "common.cuh"
#include "mma.cuh"  // smem_addr

namespace flashlab {

// ANCHOR: tensor_map
// The 128-byte tensor map the host encodes with cuTensorMapEncodeTiled (harness/src/tma.rs):
// the tensor's address, sizes and strides, the box, the swizzle. Opaque to the kernel,
// which only passes its address to the copy instructions. It must live in parameter,
// constant or global memory, so kernels take it as a `const __grid_constant__` parameter.
struct alignas(64) TensorMap {
    uint64_t opaque[16];
};
// Q, K, V and O, as the harness passes them after AttnParams.
struct AttnTensorMaps {
    TensorMap q, k, v, o;
};
static_assert(sizeof(TensorMap) == 128 && sizeof(AttnTensorMaps) == 512, "harness/src/tma.rs passes 4 x 128 bytes");
// ANCHOR_END: tensor_map

// ANCHOR: tma_load
// Loads the box at coordinates (c0 innermost, c1, c2, c3) of a 4-D tensor map into
// shared memory at `dst`, and counts its bytes on `bar` (which the issuing thread armed
// with mbarrier_arrive_expect_tx). Elements outside the tensor arrive as zeros.
__device__ __forceinline__ void tma_load_4d(void* dst, const TensorMap* map, uint64_t* bar, int c0, int c1, int c2, int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];"
        ::"r"(smem_addr(dst)), "l"(map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}
// ANCHOR_END: tma_load
// The same for a 2-D tensor map (the probe's).
__device__ __forceinline__ void tma_load_2d(void* dst, const TensorMap* map, uint64_t* bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                 ::"r"(smem_addr(dst)), "l"(map), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
                 : "memory");
}

// ANCHOR: tma_store
// Stores a box from shared memory to the tensor; elements outside it are dropped. Stores
// are tracked per thread in bulk groups, not on an mbarrier.
__device__ __forceinline__ void tma_store_4d(const TensorMap* map, const void* src, int c0, int c1, int c2, int c3) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
                 ::"l"(map), "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until the committed stores have read their shared memory (not until they reach
// global memory): the block may then exit or reuse the buffer.
__device__ __forceinline__ void tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
// Waits until the committed bulk operations have completed: their writes (or reduce-adds,
// bulk_reduce.cuh) performed in global memory, not only their shared memory read.
__device__ __forceinline__ void tma_store_wait_done() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Orders this thread's ordinary shared-memory writes before later async-proxy accesses
// (a TMA store, a wgmma) to the same memory. Each writing thread fences, then a barrier.
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// ANCHOR_END: tma_store

// ANCHOR: tma_load_tile
// A [ROWS][D] tile of a [batch][seqlen][heads][D] tensor, as D / 64 boxes of 64 columns (the
// swizzle's span) at coordinates (column, head, row, batch), each box ROWS x 64 in shared
// memory one after the other. The tensor map knows the seqlen: rows past it arrive as zeros.
template <int D, int ROWS, typename T>
__device__ __forceinline__ void tma_load_tile(T* tile_smem, const TensorMap* map, uint64_t* bar, int head, int row0, int b) {
#pragma unroll
    for (int c = 0; c < D / 64; ++c) tma_load_4d(tile_smem + c * ROWS * 64, map, bar, c * 64, head, row0, b);
}
// ANCHOR_END: tma_load_tile

// ANCHOR: smem_1024
// The block's dynamic shared memory, 1024-byte aligned. The 128-byte swizzle repeats every
// 1024 bytes and the copy engine swizzles by address bits, so each tile must start on such
// a boundary; dynamic shared memory is only guaranteed 16, so the harness asks for 1 KiB
// more and the kernel aligns by hand.
__device__ __forceinline__ unsigned char* dynamic_smem_1024() {
    extern __shared__ unsigned char smem_unaligned[];
    return smem_unaligned + ((1024 - smem_addr(smem_unaligned) % 1024) % 1024);
}
// ANCHOR_END: smem_1024

// Fetches a tensor map into the cache ahead of its first use.
__device__ __forceinline__ void tma_prefetch(const TensorMap* map) { asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory"); }

}  // namespace flashlab

// Exports `body<T, D>(p, maps)` like FLASHLAB_EXPORT_ALL (common.cuh), for kernels that
// also take the tensor maps: by value, `__grid_constant__`, so the maps stay in parameter
// memory where the copy instructions can read them.
#define FLASHLAB_EXPORT_TMA(prefix, body, T, tname, D, threads)                                                  \
    extern "C" __global__ void __launch_bounds__(threads, 1)                                                     \
        prefix##_##tname##_d##D(const flashlab::AttnParams p, const __grid_constant__ flashlab::AttnTensorMaps maps) { \
        body<T, D>(p, maps);                                                                                     \
    }
#define FLASHLAB_EXPORT_ALL_TMA(prefix, body, threads)                  \
    FLASHLAB_EXPORT_TMA(prefix, body, __nv_bfloat16, bf16, 64, threads)  \
    FLASHLAB_EXPORT_TMA(prefix, body, __nv_bfloat16, bf16, 128, threads) \
    FLASHLAB_EXPORT_TMA(prefix, body, __half, f16, 64, threads)          \
    FLASHLAB_EXPORT_TMA(prefix, body, __half, f16, 128, threads)
// The same for kernels whose block size depends on the head dim: `threads` names a
// variable template, `threads<D>` threads for head dim D.
#define FLASHLAB_EXPORT_ALL_TMA_PER_D(prefix, body, threads)                  \
    FLASHLAB_EXPORT_TMA(prefix, body, __nv_bfloat16, bf16, 64, threads<64>)   \
    FLASHLAB_EXPORT_TMA(prefix, body, __nv_bfloat16, bf16, 128, threads<128>) \
    FLASHLAB_EXPORT_TMA(prefix, body, __half, f16, 64, threads<64>)           \
    FLASHLAB_EXPORT_TMA(prefix, body, __half, f16, 128, threads<128>)
// And with head dim 256 as well.
#define FLASHLAB_EXPORT_ALL_TMA_PER_D_256(prefix, body, threads)                   \
    FLASHLAB_EXPORT_ALL_TMA_PER_D(prefix, body, threads)                           \
    FLASHLAB_EXPORT_TMA(prefix, body, __nv_bfloat16, bf16, 256, threads<256>)      \
    FLASHLAB_EXPORT_TMA(prefix, body, __half, f16, 256, threads<256>)
