// fragments.cuh: where each element of a tensor-core fragment lives, as the PTX ISA
// defines it for mma.sync.m16n8k16 / m16n8k8 (f16 and bf16) and ldmatrix. Kernels use
// these to index their registers (masking, writing O); layout-viz calls the same
// functions through a host build to draw them, and a GPU test checks them against what
// the hardware really delivers. Book: "A GPU primer: tensor cores" and stage 3.
//
// Naming: `lane` is the thread's index in its warp (0..31), `i` the element's index in
// the thread's fragment (each 32-bit register holds two 16-bit elements, i = 2*reg + half).
#pragma once
#include "hostdev.cuh"

namespace flashlab {

struct RowCol {
    int row;
    int col;
};

// The four lanes that share a row of C are a "quad": lane = 4 * group + thread_in_group.
FL_HOST_DEVICE int quad_group(int lane) { return lane >> 2; }
FL_HOST_DEVICE int quad_lane(int lane) { return lane & 3; }

// mma.m16n8k16, A operand (16 x 16, row-major), 8 elements per lane (a0..a7):
// rows group and group+8, columns 2t, 2t+1 and the same again 8 columns on.
FL_HOST_DEVICE RowCol mma_m16n8k16_a(int lane, int i) {
    return {quad_group(lane) + 8 * ((i >> 1) & 1), 2 * quad_lane(lane) + (i & 1) + 8 * (i >> 2)};
}

// mma.m16n8k16, B operand (16 x 8, K x N, "col"), 4 elements per lane (b0..b3).
FL_HOST_DEVICE RowCol mma_m16n8k16_b(int lane, int i) {
    return {2 * quad_lane(lane) + (i & 1) + 8 * (i >> 1), quad_group(lane)};
}

// mma.m16n8k16 and m16n8k8, C/D accumulator (16 x 8, f32), 4 elements per lane (c0..c3):
// lane 0 holds (0,0), (0,1), (8,0), (8,1).
FL_HOST_DEVICE RowCol mma_m16n8_c(int lane, int i) {
    return {quad_group(lane) + 8 * (i >> 1), 2 * quad_lane(lane) + (i & 1)};
}

// mma.m16n8k8, A operand (16 x 8), 4 elements per lane.
FL_HOST_DEVICE RowCol mma_m16n8k8_a(int lane, int i) {
    return {quad_group(lane) + 8 * (i >> 1), 2 * quad_lane(lane) + (i & 1)};
}

// mma.m16n8k8, B operand (8 x 8, K x N), 2 elements per lane.
FL_HOST_DEVICE RowCol mma_m16n8k8_b(int lane, int i) {
    return {2 * quad_lane(lane) + i, quad_group(lane)};
}

// ldmatrix.x{1,2,4}: lanes 8m..8m+7 give the addresses of the 8 rows of matrix m (each
// row 16 bytes: 8 elements). This returns (matrix, row) for the address `lane` supplies.
// x1 reads addresses from lanes 0..7 only, x2 from 0..15; the other lanes' are ignored.
FL_HOST_DEVICE RowCol ldmatrix_address_of(int lane) { return {lane >> 3, lane & 7}; }

// ldmatrix destination: register m of `lane` receives two elements of matrix m, at
// (row, col) and (row, col+1) without .trans; with .trans the matrix is read transposed,
// so the two elements are (row, col) and (row+1, col) of the stored matrix.
FL_HOST_DEVICE RowCol ldmatrix_element(int lane, int half, bool trans) {
    return trans ? RowCol{2 * quad_lane(lane) + half, quad_group(lane)}
                 : RowCol{quad_group(lane), 2 * quad_lane(lane) + half};
}

// ANCHOR: pv_key_order
// V's keys in the order P V reads them (layout-viz's `fp8_pv_key`; its
// tests hold the two together through the host build): within each group of 32
// keys, column k of the transposed V tile holds key 16 (k / 16) + 8 ((k % 4) / 2) +
// 2 ((k % 16) / 4) + k % 2. In that order the 8-bit A fragment of P is a plain packing of each
// thread's own S accumulator, with no shuffles. This is the inverse: the column of key j.
FL_HOST_DEVICE int fp8_pv_column(int j) {
    const int in_group = j % 32;
    return j - in_group + 16 * (in_group / 16) + 4 * ((in_group % 8) / 2) + 2 * ((in_group % 16) / 8) + in_group % 2;
}
// ANCHOR_END: pv_key_order

// ANCHOR: vt_transpose
// Stage 24's transpose of a V tile into V^T, both 128 rows of 128 codes under the 128-byte
// swizzle (row i's 16-byte chunk j at chunk j ^ (i % 8)), as byte offsets. Lane (a, b, c) =
// (lane % 4, lane / 4 % 4, lane / 16), for each of its 32 units (xyz = 0..7, u = 0..3), takes
// the 4 x 4 codes of keys 16 q + 2 b + {0, 1, 8, 9} (V^T's columns 4 m .. 4 m + 3, m = 4 q + b,
// in fp8_pv_column's order) at head dims 4 g .. 4 g + 3, g = 8 u + 4 c + a, where
// q = (a / 2 ^ x) + 2 (c ^ y) + 4 z. Load i (0..3) reads key 16 q + 2 b + {0, 1, 8, 9}[i];
// store j writes V^T's row 4 g + j. layout-viz's tests check that every code lands in its
// place and that each of a warp's loads and stores touches 32 different banks. Book: "Stage
// 24: V transposed in the kernel", section "No bank conflicts either way".
FL_HOST_DEVICE int fp8_vt_q(int lane, int xyz) {
    const int a = lane & 3, c = lane >> 4;
    return (((a >> 1) ^ (xyz & 1)) | ((c ^ ((xyz >> 1) & 1)) << 1)) + 4 * (xyz >> 2);
}
FL_HOST_DEVICE int fp8_vt_load(int lane, int xyz, int u, int i) {
    const int a = lane & 3, b = (lane >> 2) & 3, c = lane >> 4, odd = i & 1;
    // Row 16 q + 2 b + odd + 8 (i / 2); chunk (2 u + c) ^ (2 b + odd), the row's % 8.
    return 2048 * fp8_vt_q(lane, xyz) + 256 * b + 128 * odd + 1024 * (i >> 1) + 32 * (u ^ b) + 16 * (c ^ odd) + 4 * a;
}
FL_HOST_DEVICE int fp8_vt_store(int lane, int xyz, int u, int j) {
    const int a = lane & 3, b = (lane >> 2) & 3, c = lane >> 4;
    // Row 4 g + j, whose % 8 is 4 (a % 2) + j; word m = 4 q + b, in chunk q ^ that.
    const int row0 = 2048 * c + 512 * a + 4 * b + 16 * (fp8_vt_q(lane, xyz) ^ (4 * (a & 1)));
    return (row0 ^ (16 * j)) + 128 * j + 4096 * u;
}
// ANCHOR_END: vt_transpose

// ANCHOR: vt_matrices
// Stage 30's transpose of the same tiles by ldmatrix.trans and stmatrix: one x4 pair a block
// of 16 keys (kb = 0..7: keys 16 kb ..) by 32 head dims (g = 0..3: dims 32 g ..). The load
// reads 16-bit pairs transposed, so lane L's register m holds the 2 x 2 codes of keys
// 16 kb + 8 (m % 2) + 2 (L % 4) + {0, 1} at dims 32 g + 16 (m / 2) + 2 (L / 4) + {0, 1}; two
// byte permutes of registers 2 h and 2 h + 1 give each of those dims its four keys
// 16 kb + 2 (L % 4) + {0, 1, 8, 9}, V^T's columns 16 kb + 4 (L % 4) .. + 3 in fp8_pv_column's
// order, and the store writes them: register m of lane L is row L / 4 of matrix m. Matrix
// 2 h + e's row r is head dim 32 g + 16 h + 2 r + (e ^ (r / 4)): even dims in its first four
// rows and odd ones after them for e = 0, so that its 8 rows fall in 8 different rows of the
// swizzle's period. Both tiles are 128 rows of 128 codes, 128-byte swizzled (row i's 16-byte
// chunk j at chunk j ^ (i % 8)); byte offsets, each a lane's constant and a step: on to the
// next 32 dims, the load's chunk index is XOR-ed with 2 and the store's rows move 4096 bytes;
// on to the next 16 keys, the load's rows move 2048 bytes and the store's chunk index is
// XOR-ed with 1 (the _step functions; the kernel steps shared-memory addresses with them,
// which the 1024-byte aligned slots allow, and steps twice, to the first block of a run of
// four and then through it). Book: "Stage 30: the transpose on ldmatrix and stmatrix".
FL_HOST_DEVICE int fp8_vt_ldsm_lane(int lane) {
    // Matrix lane / 8: keys + 8 for matrices 1 and 3, the second 16 dims for 2 and 3. Row
    // lane % 8 is key lane % 8 (+ 8), the % 8 that chunk lane / 16 is XOR-ed with.
    return 128 * ((lane & 7) + 8 * ((lane >> 3) & 1)) + 16 * ((lane >> 4) ^ (lane & 7));
}
FL_HOST_DEVICE unsigned fp8_vt_ldsm_step(unsigned at, int g, int kb) { return (at ^ (32 * g)) + 2048 * kb; }
FL_HOST_DEVICE int fp8_vt_ldsm_row(int lane, int g, int kb) { return fp8_vt_ldsm_step(fp8_vt_ldsm_lane(lane), g, kb); }
FL_HOST_DEVICE int fp8_vt_stsm_lane(int lane) {
    const int m = lane >> 3, r = lane & 7;
    const int dim = 16 * (m >> 1) + 2 * r + ((m & 1) ^ (r >> 2));  // of the first 32
    return 128 * dim + 16 * (dim & 7);
}
FL_HOST_DEVICE unsigned fp8_vt_stsm_step(unsigned at, int g, int kb) { return (at + 4096 * g) ^ (16 * kb); }
FL_HOST_DEVICE int fp8_vt_stsm_row(int lane, int g, int kb) { return fp8_vt_stsm_step(fp8_vt_stsm_lane(lane), g, kb); }
// The permute giving register m of the store from the load's registers 2 (m / 2) and
// 2 (m / 2) + 1: bytes 0 and 2 of each (the even dim) or 1 and 3 (the odd one).
FL_HOST_DEVICE unsigned fp8_vt_perm(int lane, int m) { return ((m & 1) ^ (lane >> 4)) ? 0x7531u : 0x6420u; }
// ANCHOR_END: vt_matrices

}  // namespace flashlab
