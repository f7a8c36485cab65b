// mbarrier.cuh: Hopper's transaction barriers in shared memory, one small wrapper per PTX
// instruction. The TMA stage on use them to learn when a copy has landed: a barrier
// completes a phase when its expected arrivals have arrived *and* the bytes it was told
// to expect have been written. Book: "Stage 10: TMA and mbarriers", section "Phases".
#pragma once
#include <stdint.h>

#include "mma.cuh"  // smem_addr

namespace flashlab {

// ANCHOR: mbarrier
// A barrier lives in 8 bytes of shared memory. `arrivals` is how many arrive operations
// complete one phase (1 for a "full" barrier: the thread that issues the copy).
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, int arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals));
}

// Makes the initialized barriers visible to the async proxy (the copy engine) before any
// copy is told to complete on them; a __syncthreads after it publishes them to the threads.
__device__ __forceinline__ void mbarrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// One arrival that also tells the barrier to expect `bytes` more bytes in this phase: the
// phase completes only when the copies that name this barrier have written them all.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// Waits until the phase with parity `phase` (0 or 1) has completed. A barrier's phases
// alternate even, odd, even...: a waiter names the parity of the phase it waits for, so a
// ring slot used for the n-th time waits on parity n % 2. try_wait suspends the thread for
// a while in hardware before it reports failure, so the loop does not spin hot.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t phase) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "wait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait;\n"
        "}\n" ::"r"(smem_addr(bar)),
        "r"(phase)
        : "memory");
}
// ANCHOR_END: mbarrier

// ANCHOR: arrive
// A plain arrival, no bytes: how a consumer tells the producer it is done with a ring
// slot (an "empty" barrier counts one arrival per consumer warp). Book: "Stage 12: warp
// specialization", section "Full and empty".
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// ANCHOR_END: arrive

}  // namespace flashlab
