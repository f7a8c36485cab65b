//! Safe Rust wrappers around the kernels' own `__host__ __device__` index functions
//! (`kernel-headers/include/flashlab/*.cuh`), compiled for the host by `build.rs` from
//! `cpp/kernel_fns.cpp`.
//!
//! layout-viz keeps its own models of the same facts (`atoms`, `swizzle`); the tests hold
//! the two against each other, and the bank maps of the stages are computed from these
//! functions so that the book shows what the kernels do.
//!
//! Adding a kernel function is one `FL_EXPORT_*` line in the C++ shim and one line in the
//! `fragment_fns!` list below (or a hand-written wrapper for another signature).

use std::ffi::c_int;

use thiserror::Error;

/// A failure to call one of the kernels' index functions.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KernelFnError {
    /// The kernels never instantiate this `Swizzle<B, M, S>`, so the host build has no
    /// code for it.
    #[error(
        "Swizzle<{bits},{base},{shift}> is not instantiated by the kernels (have: {available})"
    )]
    UnsupportedSwizzle {
        bits: u32,
        base: u32,
        shift: u32,
        available: String,
    },
    /// An offset outside the `int` range the device functions take.
    #[error("offset {0} does not fit the kernels' 32-bit int")]
    OffsetOutOfRange(u64),
}

pub use crate::atoms::RowCol;

mod ffi {
    use std::ffi::c_int;

    unsafe extern "C" {
        pub fn fl_swizzle(b: c_int, m: c_int, s: c_int, offset: c_int) -> c_int;
        pub fn fl_swizzle_count() -> c_int;
        pub fn fl_fp8_pv_column(key: c_int) -> c_int;
        pub fn fl_fp8_vt_load(lane: c_int, xyz: c_int, u: c_int, i: c_int) -> c_int;
        pub fn fl_fp8_vt_store(lane: c_int, xyz: c_int, u: c_int, j: c_int) -> c_int;
        pub fn fl_fp8_vt_ldsm_row(lane: c_int, g: c_int, kb: c_int) -> c_int;
        pub fn fl_fp8_vt_stsm_row(lane: c_int, g: c_int, kb: c_int) -> c_int;
        pub fn fl_fp8_vt_perm(lane: c_int, m: c_int) -> std::ffi::c_uint;
        pub fn fl_fp8_vt_ldsm_step(at: std::ffi::c_uint, g: c_int, kb: c_int) -> std::ffi::c_uint;
        pub fn fl_fp8_vt_stsm_step(at: std::ffi::c_uint, g: c_int, kb: c_int) -> std::ffi::c_uint;
        pub fn fl_tile_offset(d: c_int, swizzled: c_int, row: c_int, col: c_int) -> c_int;
        pub fn fl_swizzled_step_cols(offset: c_int, col_step16: c_int) -> c_int;
        pub fn fl_swizzled_step_rows(d: c_int, offset: c_int, row_step8: c_int) -> c_int;
        pub fn fl_tile_offset_tma(rows: c_int, row: c_int, col: c_int) -> c_int;
        pub fn fl_tma_step_cols(rows: c_int, offset: c_int, col_step16: c_int) -> c_int;
        pub fn fl_tma_step_rows(offset: c_int, row_step8: c_int) -> c_int;
        pub fn fl_swizzle_params(k: c_int, b: *mut c_int, m: *mut c_int, s: *mut c_int);
        pub fn fl_ldmatrix_address_of(lane: c_int, matrix: *mut c_int, row: *mut c_int);
        pub fn fl_ldmatrix_element(
            lane: c_int,
            half: c_int,
            trans: c_int,
            row: *mut c_int,
            col: *mut c_int,
        );
    }
}

/// Calls a `void f(int, int, int*, int*)` export and packs the two outputs.
fn call_pair(
    f: unsafe extern "C" fn(c_int, c_int, *mut c_int, *mut c_int),
    a: u32,
    b: u32,
) -> RowCol {
    let (mut row, mut col): (c_int, c_int) = (0, 0);
    // SAFETY: the exports are pure integer functions writing their two out-parameters,
    // which point at live locals.
    unsafe { f(a as c_int, b as c_int, &mut row, &mut col) };
    // The header functions only add and multiply non-negative lane / index bits.
    RowCol {
        row: row as u32,
        col: col as u32,
    }
}

/// Declares the export `fl_<name>(lane, i, &row, &col)` and its safe wrapper `<name>`.
macro_rules! fragment_fns {
    ($($(#[$doc:meta])* $name:ident => $export:ident;)*) => {
        mod fragment_ffi {
            use std::ffi::c_int;
            unsafe extern "C" {
                $(pub fn $export(lane: c_int, i: c_int, row: *mut c_int, col: *mut c_int);)*
            }
        }
        $(
            $(#[$doc])*
            pub fn $name(lane: u32, i: u32) -> RowCol {
                call_pair(fragment_ffi::$export, lane, i)
            }
        )*
    };
}

fragment_fns! {
    /// `flashlab::mma_m16n8k16_a`: element `i` (0..8) of lane `lane`'s A fragment, as (m, k).
    mma_m16n8k16_a => fl_mma_m16n8k16_a;
    /// `flashlab::mma_m16n8k16_b`: element `i` (0..4) of the B fragment, as (k, n).
    mma_m16n8k16_b => fl_mma_m16n8k16_b;
    /// `flashlab::mma_m16n8_c`: element `i` (0..4) of the C/D accumulator of m16n8k16 and
    /// m16n8k8, as (m, n).
    mma_m16n8_c => fl_mma_m16n8_c;
    /// `flashlab::mma_m16n8k8_a`: element `i` (0..4) of the A fragment, as (m, k).
    mma_m16n8k8_a => fl_mma_m16n8k8_a;
    /// `flashlab::mma_m16n8k8_b`: element `i` (0..2) of the B fragment, as (k, n).
    mma_m16n8k8_b => fl_mma_m16n8k8_b;
}

/// `flashlab::fp8_pv_column`: the column of the FP8 stages' transposed V tile that holds key
/// `key` (the inverse of [`crate::atoms::fp8_pv_key`] within each group of 32 keys).
pub fn fp8_pv_column(key: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_pv_column(key as c_int) as u32 }
}

/// `flashlab::fp8_vt_load`: the byte offset in stage 24's landed V tile of load `i` (0..4) of
/// `lane`'s unit (`xyz` 0..8, `u` 0..4).
pub fn fp8_vt_load(lane: u32, xyz: u32, u: u32, i: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_vt_load(lane as c_int, xyz as c_int, u as c_int, i as c_int) as u32 }
}

/// `flashlab::fp8_vt_store`: the byte offset in stage 24's V^T tile of store `j` (0..4) of
/// `lane`'s unit (`xyz` 0..8, `u` 0..4).
pub fn fp8_vt_store(lane: u32, xyz: u32, u: u32, j: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_vt_store(lane as c_int, xyz as c_int, u as c_int, j as c_int) as u32 }
}

/// `flashlab::fp8_vt_ldsm_row`: the byte offset in stage 30's landed V tile of the row
/// address `lane` gives `ldmatrix.x4.trans` for block (`g` 0..4, `kb` 0..8).
pub fn fp8_vt_ldsm_row(lane: u32, g: u32, kb: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_vt_ldsm_row(lane as c_int, g as c_int, kb as c_int) as u32 }
}

/// `flashlab::fp8_vt_stsm_row`: the byte offset in stage 30's V^T tile of the row address
/// `lane` gives `stmatrix.x4` for block (`g`, `kb`).
pub fn fp8_vt_stsm_row(lane: u32, g: u32, kb: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_vt_stsm_row(lane as c_int, g as c_int, kb as c_int) as u32 }
}

/// `flashlab::fp8_vt_ldsm_step`: a row address `at` of stage 30's load moved on by `g` groups
/// of 32 head dims and `kb` blocks of 16 keys.
pub fn fp8_vt_ldsm_step(at: u32, g: u32, kb: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_vt_ldsm_step(at, g as c_int, kb as c_int) }
}

/// `flashlab::fp8_vt_stsm_step`: the same for a row address of stage 30's store.
pub fn fp8_vt_stsm_step(at: u32, g: u32, kb: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_vt_stsm_step(at, g as c_int, kb as c_int) }
}

/// `flashlab::fp8_vt_perm`: the `prmt` selector that makes register `m` of `lane`'s store.
pub fn fp8_vt_perm(lane: u32, m: u32) -> u32 {
    // SAFETY: pure integer function.
    unsafe { ffi::fl_fp8_vt_perm(lane as c_int, m as c_int) }
}

/// `flashlab::ldmatrix_address_of`: the (matrix, row) whose 16-byte row address `lane`
/// supplies to `ldmatrix`.
pub fn ldmatrix_address_of(lane: u32) -> (u32, u32) {
    let (mut matrix, mut row): (c_int, c_int) = (0, 0);
    // SAFETY: pure integer function writing two out-parameters that point at locals.
    unsafe { ffi::fl_ldmatrix_address_of(lane as c_int, &mut matrix, &mut row) };
    (matrix as u32, row as u32)
}

/// `flashlab::ldmatrix_element`: the (row, col) of the 8x8 matrix that half `half` (0 or
/// 1) of each destination register of `lane` receives.
pub fn ldmatrix_element(lane: u32, half: u32, trans: bool) -> RowCol {
    let (mut row, mut col): (c_int, c_int) = (0, 0);
    // SAFETY: pure integer function writing two out-parameters that point at locals.
    unsafe {
        ffi::fl_ldmatrix_element(
            lane as c_int,
            half as c_int,
            c_int::from(trans),
            &mut row,
            &mut col,
        )
    };
    RowCol {
        row: row as u32,
        col: col as u32,
    }
}

/// The `Swizzle<B, M, S>` triples the host build instantiates (the kernels' set).
pub fn supported_swizzles() -> Vec<(u32, u32, u32)> {
    // SAFETY: no arguments, returns a count.
    let n = unsafe { ffi::fl_swizzle_count() };
    (0..n)
        .map(|k| {
            let (mut b, mut m, mut s): (c_int, c_int, c_int) = (0, 0, 0);
            // SAFETY: writes three out-parameters that point at locals.
            unsafe { ffi::fl_swizzle_params(k, &mut b, &mut m, &mut s) };
            (b as u32, m as u32, s as u32)
        })
        .collect()
}

/// The head dims whose shared-memory tiles `smem_tile.cuh` lays out (256: the decode
/// stages only).
pub const TILE_HEAD_DIMS: [u32; 3] = [64, 128, 256];

/// `flashlab::tile_offset_{rowmajor,swizzled}<d>(row, col)`: the element offset the
/// tensor-core stages store (row, col) of a Q/K/V tile at. `None` for another head dim.
pub fn tile_offset(d: u32, swizzled: bool, row: u32, col: u32) -> Option<u64> {
    // SAFETY: pure integer function.
    let out =
        unsafe { ffi::fl_tile_offset(d as c_int, swizzled as c_int, row as c_int, col as c_int) };
    (out >= 0).then_some(out as u64)
}

/// An element offset as the device functions take it: an `int`.
fn offset_arg(offset: u64) -> Result<c_int, KernelFnError> {
    c_int::try_from(offset).map_err(|_| KernelFnError::OffsetOutOfRange(offset))
}

/// `flashlab::swizzled_step_cols(offset, k)`: the offset 16·k columns further along a row.
pub fn swizzled_step_cols(offset: u64, col_step16: u32) -> Result<u64, KernelFnError> {
    let offset = offset_arg(offset)?;
    // SAFETY: pure integer function.
    Ok(unsafe { ffi::fl_swizzled_step_cols(offset, col_step16 as c_int) } as u64)
}

/// `flashlab::swizzled_step_rows<d>(offset, n)`: the offset 8·n rows further down; `None`
/// for a head dim the host build does not instantiate.
pub fn swizzled_step_rows(
    d: u32,
    offset: u64,
    row_step8: u32,
) -> Result<Option<u64>, KernelFnError> {
    let offset = offset_arg(offset)?;
    // SAFETY: pure integer function.
    let out = unsafe { ffi::fl_swizzled_step_rows(d as c_int, offset, row_step8 as c_int) };
    Ok((out >= 0).then_some(out as u64))
}

/// The tile heights (rows) whose TMA tiles the host build instantiates.
pub const TMA_TILE_ROWS: [u32; 2] = [64, 128];

/// `flashlab::tile_offset_tma<rows>(row, col)`: the element offset at which a TMA load
/// with the 128-byte swizzle leaves (row, col) of a `[rows][d]` tile, loaded as `d / 64`
/// boxes of 64 columns (stage 10 on). `None` for another tile height.
pub fn tile_offset_tma(rows: u32, row: u32, col: u32) -> Option<u64> {
    // SAFETY: pure integer function.
    let out = unsafe { ffi::fl_tile_offset_tma(rows as c_int, row as c_int, col as c_int) };
    (out >= 0).then_some(out as u64)
}

/// `flashlab::tma_step_cols<rows>(offset, k)`: 16·k columns further along a row; `None`
/// for a tile height the host build does not instantiate.
pub fn tma_step_cols(
    rows: u32,
    offset: u64,
    col_step16: u32,
) -> Result<Option<u64>, KernelFnError> {
    let offset = offset_arg(offset)?;
    // SAFETY: pure integer function.
    let out = unsafe { ffi::fl_tma_step_cols(rows as c_int, offset, col_step16 as c_int) };
    Ok((out >= 0).then_some(out as u64))
}

/// `flashlab::tma_step_rows(offset, n)`: 8·n rows further down.
pub fn tma_step_rows(offset: u64, row_step8: u32) -> Result<u64, KernelFnError> {
    let offset = offset_arg(offset)?;
    // SAFETY: pure integer function.
    Ok(unsafe { ffi::fl_tma_step_rows(offset, row_step8 as c_int) } as u64)
}

/// `flashlab::swizzle<B, M, S>(offset)`, for the instances the kernels use.
pub fn swizzle(bits: u32, base: u32, shift: u32, offset: u64) -> Result<u64, KernelFnError> {
    let unsupported = || KernelFnError::UnsupportedSwizzle {
        bits,
        base,
        shift,
        available: supported_swizzles()
            .iter()
            .map(|(b, m, s)| format!("<{b},{m},{s}>"))
            .collect::<Vec<_>>()
            .join(" "),
    };
    if !supported_swizzles().contains(&(bits, base, shift)) {
        return Err(unsupported());
    }
    let arg = offset_arg(offset)?;
    // SAFETY: pure integer function.
    let out = unsafe { ffi::fl_swizzle(bits as c_int, base as c_int, shift as c_int, arg) };
    if out < 0 {
        Err(unsupported())
    } else {
        Ok(out as u64)
    }
}
