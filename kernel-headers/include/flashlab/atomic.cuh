// atomic.cuh: a counter shared by the blocks of one launch, one wrapper per PTX instruction.
// Book: "Stage 15: the combine fused", section "The last split merges"; "Stage 22: the
// backward pass", section "The deterministic order".
#pragma once

namespace flashlab {

// ANCHOR: atomic_add_acq_rel
// Adds `value` to `*counter` in global memory and returns what it held before, with release
// and acquire semantics at GPU scope: this thread's earlier writes (and those a barrier
// ordered before them) are visible to the whole GPU before the new count is, and a thread
// that reads the count this add left sees every write released before it.
__device__ __forceinline__ int atomic_add_acq_rel_gpu(int* counter, int value) {
    int before;
    asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;" : "=r"(before) : "l"(counter), "r"(value) : "memory");
    return before;
}
// ANCHOR_END: atomic_add_acq_rel

// ANCHOR: load_acquire
// Reads `*counter` with acquire semantics at GPU scope, for a spin-wait on a counter that
// other blocks add to: the load is never served from a stale copy, and once it sees a count
// that a release (atomic_add_acq_rel_gpu) left, it sees every write released before it.
__device__ __forceinline__ int load_acquire_gpu(const int* counter) {
    int value;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(value) : "l"(counter) : "memory");
    return value;
}
// ANCHOR_END: load_acquire

}  // namespace flashlab
