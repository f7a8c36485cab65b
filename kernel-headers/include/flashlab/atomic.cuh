// atomic.cuh: a counter shared by the blocks of one launch, and the float adds that many
// blocks make to one fp32 buffer; one wrapper per PTX instruction family.
// Book: "Stage 15: the combine fused", section "The last split merges"; "Stage 22: the
// backward pass", sections "dQ's atomics" and "The deterministic order".
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

// ANCHOR: red_add
// Float adds to global memory with nothing returned (a RED: the add happens in the L2 cache,
// and the thread does not wait for it), relaxed, at GPU scope, as atomicAdd's. Stage 22's
// dQ (book: "dQ's atomics"): each thread adds a few consecutive floats of a row. One scalar
// RED per float makes a warp instruction touch eight 32-byte sectors, half of each unused;
// sm_90's vector form adds a thread's 2 consecutive floats in one request (each float
// atomically, not the pair as a whole), and the warp's 8 sectors are full. The address must
// be 8-byte aligned. Before sm_90 there is none: one atomicAdd per float, the same sum. (The
// 4-float form, after a shuffle, measured slower: bench/experiments/2026-11-27-backward-dq-atomics.)
__device__ __forceinline__ void red_add_v2_f32(float* addr, float2 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};" ::"l"(addr), "f"(v.x), "f"(v.y) : "memory");
#else
    atomicAdd(addr, v.x);
    atomicAdd(addr + 1, v.y);
#endif
}
// ANCHOR_END: red_add

}  // namespace flashlab
