// smem_tile.cuh: where element (row, col) of a [rows][D] tile of 16-bit elements sits in
// shared memory, for the tensor-core stages. Stage 3 stores tiles row-major; stage 4 on
// XOR-swizzles the 16-byte chunks of each row by the row index, so the 8 row addresses of
// an ldmatrix phase fall in 8 different bank groups. layout-viz draws the bank maps of
// both from these functions. Book: "Stage 4: swizzled shared memory".
#pragma once
#include "hostdev.cuh"
#include "swizzle.cuh"

namespace flashlab {

// ANCHOR: tile_swizzle
// A row of D 16-bit elements is D/8 16-byte chunks; the swizzle XORs the chunk index
// (element bits 3..5) with the row index (the bits just above the column bits), which is
// Swizzle<3, 3, log2(D) - 3>: Swizzle<3,3,3> for D = 64, Swizzle<3,3,4> for D = 128,
// Swizzle<3,3,5> for D = 256 (the decode stages).
template <int D>
struct TileSwizzle;
template <>
struct TileSwizzle<64> {
    static constexpr int B = 3, M = 3, S = 3;
};
template <>
struct TileSwizzle<128> {
    static constexpr int B = 3, M = 3, S = 4;
};
template <>
struct TileSwizzle<256> {
    static constexpr int B = 3, M = 3, S = 5;
};

template <int D>
FL_HOST_DEVICE int tile_offset_rowmajor(int row, int col) {
    return row * D + col;
}

template <int D>
FL_HOST_DEVICE int tile_offset_swizzled(int row, int col) {
    using Sw = TileSwizzle<D>;
    return swizzle<Sw::B, Sw::M, Sw::S>(row * D + col);
}
// ANCHOR_END: tile_swizzle

// ANCHOR: stepping
// Stepping through a swizzled tile without recomputing the swizzle. Within a row, a
// column c0 < 16 plus 16 * kk occupies disjoint bits, and the swizzle only XORs the
// row's bits into the column's, so
//     tile_offset_swizzled(row, c0 + 16 * kk) == tile_offset_swizzled(row, c0) ^ (16 * kk)
// and moving down 8 rows leaves row % 8, hence the XOR, unchanged:
//     tile_offset_swizzled(row + 8 * n, col) == tile_offset_swizzled(row, col) + 8 * n * D.
// A kernel computes one offset per lane and then steps with one XOR or one add (stage 6 on).
// One refinement: a lane's starting column is 0 or 8, so bit 6 of its offset (columns
// 64..127, which the swizzle leaves alone) is 0, and XOR-ing that bit is adding 64. Written
// as an add, the compiler folds it into the load's immediate offset: only the XOR of bits
// 4..5 (steps 0..3) stays an instruction, and 3 of those serve all 8 steps at D = 128.
// The host tests check both identities over the whole tile.
FL_HOST_DEVICE int swizzled_step_cols(int offset, int col_step16) {
    return (offset ^ (16 * (col_step16 & 3))) + 64 * (col_step16 >> 2);
}
template <int D>
FL_HOST_DEVICE int swizzled_step_rows(int offset, int row_step8) {
    return offset + 8 * row_step8 * D;
}
// ANCHOR_END: stepping

// ANCHOR: tma_tile
// The layout TMA writes with CU_TENSOR_MAP_SWIZZLE_128B (stage 10 on). A box row may span
// at most the swizzle's 128 bytes, 64 16-bit elements, so a [ROWS][D] tile arrives as D / 64
// boxes of [ROWS][64], one after another; inside each, the copy engine XORs the 16-byte
// chunk index (byte bits 4..6) with the 128-byte row index (bits 7..9): Swizzle<3,4,3> on
// bytes, which is Swizzle<3,3,3> on 16-bit offsets. At D = 64 this is stage 4's layout; at
// D = 128 the two 64-column halves are separate boxes instead of one 256-byte row.
template <int ROWS>
FL_HOST_DEVICE int tile_offset_tma(int row, int col) {
    return (col / 64) * (ROWS * 64) + swizzle<3, 3, 3>(row * 64 + col % 64);
}
// Stepping, as for stage 4's tile: 16 columns further is an XOR inside a box (steps 0..3)
// and ROWS * 64 elements to the next box, a constant the compiler folds into the address;
// 8 rows further is + 8 * 64.
template <int ROWS>
FL_HOST_DEVICE int tma_step_cols(int offset, int col_step16) {
    return (offset ^ (16 * (col_step16 & 3))) + ROWS * 64 * (col_step16 >> 2);
}
FL_HOST_DEVICE int tma_step_rows(int offset, int row_step8) { return offset + 8 * 64 * row_step8; }
// ANCHOR_END: tma_tile

}  // namespace flashlab
