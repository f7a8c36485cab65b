// setmaxnreg.cuh: Hopper's register reallocation between warpgroups. A block is launched
// with one register count for every thread (the `__launch_bounds__(threads, 1)` cap); a
// warpgroup that needs few (the TMA producer) gives registers back to the block's pool with
// `setmaxnreg.dec`, and one that needs many (a consumer holding S, P and O) takes them with
// `setmaxnreg.inc`, which waits until the pool has them: it holds only what the block was
// launched with, so an over-budget request waits forever. Counts are multiples of 8 from 24
// to 256; every warp of the warpgroup executes the same instruction. ptxas honours it only
// when it knows the count at entry (from `__launch_bounds__`) and each role is one branch
// of an if/else; otherwise it prints C7508 (an info line, "Potential Performance Loss")
// and ignores it.
// Book: "Stage 12: warp specialization", section "Registers where they are needed".
#pragma once

namespace flashlab {

// ANCHOR: setmaxnreg
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
    static_assert(REGS % 8 == 0 && REGS >= 24 && REGS <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
    static_assert(REGS % 8 == 0 && REGS >= 24 && REGS <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}
// ANCHOR_END: setmaxnreg

}  // namespace flashlab
