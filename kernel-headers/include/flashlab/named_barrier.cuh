// named_barrier.cuh: the SM's 16 hardware barriers, by number, for a subset of a block's
// threads. `__syncthreads()` is barrier 0 for every thread; `bar.sync id, n` waits until n
// threads (a multiple of 32, whole warps) have arrived at barrier `id`, and `bar.arrive`
// counts a warp in without waiting for the others. Warp-specialized kernels use them where
// a block barrier would make the producer wait for the consumers. Each kernel names its ids
// in an enum, starting after 0. Book: "Stage 12: warp specialization", section "Roles".
#pragma once

namespace flashlab {

// ANCHOR: named_barrier
// Waits until `threads` threads have arrived at barrier `id` (this one included).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Arrives at barrier `id` and goes on: the waiters of `bar.sync id, threads` count it.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// ANCHOR_END: named_barrier

}  // namespace flashlab
