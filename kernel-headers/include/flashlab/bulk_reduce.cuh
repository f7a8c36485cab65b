// bulk_reduce.cuh: the copy engine's bulk reduce, one wrapper per PTX instruction family.
// One thread hands it a contiguous run of bytes in shared memory and an address in global
// memory; the engine adds the run element by element into global memory (in the L2 cache,
// as atomics do, but as one request instead of one per element) and tracks the operation
// in the thread's bulk groups, like a TMA store (tma.cuh: tma_store_commit, and the waits).
// Book: "Stage 23: the backward on Hopper", section "dQ by bulk reduce-add".
#pragma once
#include <stdint.h>

#include "mma.cuh"  // smem_addr

namespace flashlab {

// ANCHOR: bulk_reduce_add
// dst[i] += src[i] for the `bytes / 4` floats at `src_smem`: both 16-byte aligned, `bytes`
// a multiple of 16. The writes of the threads that filled `src_smem` must be ordered before
// it (fence_proxy_async_smem in each, then a barrier), and `src_smem` may be written again
// only once tma_store_wait_read has returned.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst_global, const float* src_smem, uint32_t bytes) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst_global),
                 "r"(smem_addr(src_smem)), "r"(bytes)
                 : "memory");
}
// ANCHOR_END: bulk_reduce_add

// ANCHOR: fence_proxy_async_global
// Orders this thread's global-memory accesses through the generic proxy (ordinary loads,
// stores and atomics) against its accesses through the async proxy (the copy engine's bulk
// operations), both ways. The deterministic order needs it on both sides of its counter: a
// block's reduce-adds complete before it counts them, and the next block's start only after
// it has read that count.
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }
// ANCHOR_END: fence_proxy_async_global

}  // namespace flashlab
