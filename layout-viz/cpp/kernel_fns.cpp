//! kernel_fns.cpp: the host build of the kernels' own index headers, for layout-viz.
//!
//! Everything here is a thin `extern "C"` wrapper with plain ints around a function the
//! CUDA kernels call themselves (kernel-headers/include/flashlab/*.cuh), so a diagram drawn by
//! layout-viz is computed by the kernels' code, not by a copy of it. Adding a function is
//! one line here (one of the FL_EXPORT_* macros) and one line in src/kernel_fns.rs.
#include "flashlab/fragments.cuh"
#include "flashlab/smem_tile.cuh"
#include "flashlab/swizzle.cuh"

// The Swizzle<B, M, S> instances the kernels and the TMA modes use: on 16-bit elements
// <3,3,3> / <2,3,3> / <1,3,3> are the 128B / 64B / 32B patterns, on bytes <3,4,3> /
// <2,4,3> / <1,4,3>, on 32-bit elements <3,2,3> / <2,2,3> / <1,2,3>. The template only
// exists per instance, so the dispatcher lists them; add a new one as one more X(...).
#define FL_SWIZZLES(X) \
    X(1, 2, 3)         \
    X(2, 2, 3)         \
    X(3, 2, 3)         \
    X(1, 3, 3)         \
    X(2, 3, 3)         \
    X(3, 3, 3)         \
    X(3, 3, 4)         \
    X(1, 4, 3)         \
    X(2, 4, 3)         \
    X(3, 4, 3)

// A fragment function (lane, element index) -> RowCol, exported with out-parameters.
#define FL_EXPORT_FRAGMENT(name)                                \
    void fl_##name(int lane, int i, int* row, int* col) {       \
        const flashlab::RowCol rc = flashlab::name(lane, i);    \
        *row = rc.row;                                          \
        *col = rc.col;                                          \
    }

extern "C" {

// Returns -1 for a (B, M, S) the kernels do not instantiate.
int fl_swizzle(int b, int m, int s, int offset) {
#define FL_SWIZZLE_CASE(B, M, S) \
    if (b == B && m == M && s == S) return flashlab::swizzle<B, M, S>(offset);
    FL_SWIZZLES(FL_SWIZZLE_CASE)
#undef FL_SWIZZLE_CASE
    return -1;
}

// The instantiated (B, M, S) triples, so Rust can enumerate them without a second list.
int fl_swizzle_count(void) {
    int n = 0;
#define FL_SWIZZLE_COUNT(B, M, S) ++n;
    FL_SWIZZLES(FL_SWIZZLE_COUNT)
#undef FL_SWIZZLE_COUNT
    return n;
}

void fl_swizzle_params(int k, int* b, int* m, int* s) {
    int n = 0;
    *b = *m = *s = -1;
#define FL_SWIZZLE_PARAMS(B, M, S) \
    if (n++ == k) {                \
        *b = B;                    \
        *m = M;                    \
        *s = S;                    \
        return;                    \
    }
    FL_SWIZZLES(FL_SWIZZLE_PARAMS)
#undef FL_SWIZZLE_PARAMS
}

FL_EXPORT_FRAGMENT(mma_m16n8k16_a)
FL_EXPORT_FRAGMENT(mma_m16n8k16_b)
FL_EXPORT_FRAGMENT(mma_m16n8_c)
FL_EXPORT_FRAGMENT(mma_m16n8k8_a)
FL_EXPORT_FRAGMENT(mma_m16n8k8_b)

int fl_fp8_pv_column(int key) { return flashlab::fp8_pv_column(key); }
int fl_fp8_vt_load(int lane, int xyz, int u, int i) { return flashlab::fp8_vt_load(lane, xyz, u, i); }
int fl_fp8_vt_store(int lane, int xyz, int u, int j) { return flashlab::fp8_vt_store(lane, xyz, u, j); }
int fl_fp8_vt_ldsm_row(int lane, int g, int kb) { return flashlab::fp8_vt_ldsm_row(lane, g, kb); }
unsigned fl_fp8_vt_ldsm_step(unsigned at, int g, int kb) { return flashlab::fp8_vt_ldsm_step(at, g, kb); }
unsigned fl_fp8_vt_stsm_step(unsigned at, int g, int kb) { return flashlab::fp8_vt_stsm_step(at, g, kb); }
int fl_fp8_vt_stsm_row(int lane, int g, int kb) { return flashlab::fp8_vt_stsm_row(lane, g, kb); }
unsigned fl_fp8_vt_perm(int lane, int m) { return flashlab::fp8_vt_perm(lane, m); }

void fl_ldmatrix_address_of(int lane, int* matrix, int* row) {
    const flashlab::RowCol rc = flashlab::ldmatrix_address_of(lane);
    *matrix = rc.row;
    *row = rc.col;
}

void fl_ldmatrix_element(int lane, int half, int trans, int* row, int* col) {
    const flashlab::RowCol rc = flashlab::ldmatrix_element(lane, half, trans != 0);
    *row = rc.row;
    *col = rc.col;
}

// smem_tile.cuh: where (row, col) of a [rows][d] tile lives in shared memory, row-major
// (stage 3) or swizzled (stage 4 on), for the head dims the stages build. -1 otherwise.
int fl_tile_offset(int d, int swizzled, int row, int col) {
    if (d == 64) return swizzled ? flashlab::tile_offset_swizzled<64>(row, col) : flashlab::tile_offset_rowmajor<64>(row, col);
    if (d == 128) return swizzled ? flashlab::tile_offset_swizzled<128>(row, col) : flashlab::tile_offset_rowmajor<128>(row, col);
    if (d == 256) return swizzled ? flashlab::tile_offset_swizzled<256>(row, col) : flashlab::tile_offset_rowmajor<256>(row, col);
    return -1;
}

// Stage 5's address stepping through a swizzled tile (smem_tile.cuh).
int fl_swizzled_step_cols(int offset, int col_step16) { return flashlab::swizzled_step_cols(offset, col_step16); }
int fl_swizzled_step_rows(int d, int offset, int row_step8) {
    if (d == 64) return flashlab::swizzled_step_rows<64>(offset, row_step8);
    if (d == 128) return flashlab::swizzled_step_rows<128>(offset, row_step8);
    if (d == 256) return flashlab::swizzled_step_rows<256>(offset, row_step8);
    return -1;
}

// The TMA stages' tile (smem_tile.cuh: tile_offset_tma), for the tile heights they use;
// -1 otherwise. Stepping: tma_step_cols / tma_step_rows.
int fl_tile_offset_tma(int rows, int row, int col) {
    if (rows == 64) return flashlab::tile_offset_tma<64>(row, col);
    if (rows == 128) return flashlab::tile_offset_tma<128>(row, col);
    return -1;
}
int fl_tma_step_cols(int rows, int offset, int col_step16) {
    if (rows == 64) return flashlab::tma_step_cols<64>(offset, col_step16);
    if (rows == 128) return flashlab::tma_step_cols<128>(offset, col_step16);
    return -1;
}
int fl_tma_step_rows(int offset, int row_step8) { return flashlab::tma_step_rows(offset, row_step8); }

}  // extern "C"
