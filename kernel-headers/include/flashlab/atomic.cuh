// atomic.cuh: a counter shared by the blocks of one launch, one wrapper per PTX instruction.
// Book: "Stage 15: the combine fused", section "The last split merges".
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

}  // namespace flashlab
