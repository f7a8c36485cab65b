// swizzle.cuh: CuTe's Swizzle<B, M, S> on linear offsets, used by stage 4 onwards to
// place tiles in shared memory without bank conflicts. The book's "Swizzling" section
// and layout-viz's `draw swizzle` are drawn from this very function.
#pragma once
#include "hostdev.cuh"

namespace flashlab {

// Swizzle<B, M, S>: XOR the B bits that start at bit M+S into the B bits that start at
// bit M. With offsets in 16-bit elements, Swizzle<3, 3, 3> keeps each 8-element (16-byte)
// chunk whole (M = 3) and permutes the 8 chunks of a 64-element row by the row index
// (bits 6..8), so the 8 rows of an 8x8 ldmatrix phase hit 8 different bank groups.
template <int B, int M, int S>
FL_HOST_DEVICE int swizzle(int offset) {
    static_assert(B >= 0 && M >= 0 && S >= B, "Swizzle<B,M,S> needs S >= B so the two bit ranges do not overlap");
    constexpr int yyy_mask = ((1 << B) - 1) << (M + S);
    return offset ^ ((offset & yyy_mask) >> S);
}

}  // namespace flashlab
