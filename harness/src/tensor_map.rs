//! Tensor maps for the TMA stages: what the copy engine needs to know about a tensor (its
//! address, sizes, strides, the box it moves, the swizzle it applies), encoded once on the
//! host by the driver and passed to the kernel by value.
//!
//! The stages' tensors are all `[batch][seqlen][heads][head_dim]` of 16-bit elements, and
//! every map here is the same 4-D view of one: dimensions `(head_dim, heads, seqlen,
//! batch)`, innermost first, and a box of 64 columns (128 bytes, the swizzle's span) by one
//! head by `rows` positions by one batch. A kernel loads a `[rows][head_dim]` tile as
//! `head_dim / 64` such boxes at columns 0, 64, ... (`tma.cuh`, book: "Stage 10: TMA and
//! mbarriers"). Because the sequence is its own dimension, rows past `seqlen` are out of
//! the tensor: loads fill them with zeros and stores drop them, with no predicate.

use crate::error::CudaContext as _;
use crate::{AttnParams, DType, Error, Result};
use cudarc::driver::DeviceRepr;
use cudarc::driver::sys::{
    self, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};

/// Columns per box: 128 bytes of 16-bit elements, the most a 128-byte swizzle allows.
pub const BOX_COLS: u32 = 64;

/// One encoded tensor map, `CUtensorMap`: 128 opaque bytes (`TensorMap` in `tma.cuh`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TensorMap(sys::CUtensorMap);

/// The four maps a TMA kernel takes after [`AttnParams`], in `AttnTensorMaps`'s order.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AttnTensorMaps {
    pub q: TensorMap,
    pub k: TensorMap,
    pub v: TensorMap,
    pub o: TensorMap,
}

// SAFETY: plain bytes the driver wrote, laid out as `tma.cuh`'s structs (4 x 128 bytes,
// pinned there by a static_assert and here by a test); passed by value as a
// `__grid_constant__` parameter.
unsafe impl DeviceRepr for AttnTensorMaps {}

impl TensorMap {
    /// The map of a `[batch][seqlen][heads][head_dim]` tensor at device address `ptr`,
    /// moved in boxes of `rows` x 64 columns with the 128-byte swizzle.
    pub fn bshd(
        ptr: u64,
        dtype: DType,
        (batch, seqlen, heads, head_dim): (usize, usize, usize, usize),
        rows: u32,
    ) -> Result<TensorMap> {
        if head_dim % BOX_COLS as usize != 0 {
            return Err(Error::InvalidProblem(format!(
                "a TMA tile is loaded in boxes of {BOX_COLS} columns, so head dim {head_dim} must be a multiple of {BOX_COLS}"
            )));
        }
        let elem = 2u64; // both dtypes are 16-bit
        let data_type = match dtype {
            DType::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            DType::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        };
        // ANCHOR: bshd_view
        let dims = [head_dim as u64, heads as u64, seqlen as u64, batch as u64];
        // Byte strides of every dimension but the innermost (the driver's convention).
        let strides = [
            head_dim as u64 * elem,
            (heads * head_dim) as u64 * elem,
            (seqlen * heads * head_dim) as u64 * elem,
        ];
        TensorMap::tiled(
            ptr,
            data_type,
            &dims,
            &strides,
            &[BOX_COLS, 1, rows, 1],
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        )
        // ANCHOR_END: bshd_view
    }

    /// Any tiled map: `dims` innermost first, `byte_strides` for every dimension but the
    /// innermost, a box of `boxdim` elements, zero fill outside the tensor. The stages use
    /// [`TensorMap::bshd`]; the TMA probe (stage 10's tests) maps a 2-D tensor under every
    /// swizzle mode.
    pub fn tiled(
        ptr: u64,
        data_type: CUtensorMapDataType,
        dims: &[u64],
        byte_strides: &[u64],
        boxdim: &[u32],
        swizzle: CUtensorMapSwizzle,
    ) -> Result<TensorMap> {
        let rank = dims.len();
        if !(1..=5).contains(&rank) || byte_strides.len() + 1 != rank || boxdim.len() != rank {
            return Err(Error::InvalidProblem(format!(
                "a tensor map needs 1 to 5 dimensions, one stride fewer and one box size each: got {rank} dims, {} strides, {} box sizes",
                byte_strides.len(),
                boxdim.len()
            )));
        }
        let element_strides = vec![1u32; rank];
        let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
        // SAFETY: the arrays hold `rank` entries (strides rank - 1), and `map` is written by
        // the call.
        unsafe {
            sys::cuTensorMapEncodeTiled(
                map.as_mut_ptr(),
                data_type,
                rank as u32,
                ptr as *mut std::ffi::c_void,
                dims.as_ptr(),
                byte_strides.as_ptr(),
                boxdim.as_ptr(),
                element_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                // Zeros, not NaN: a key row past seqlen_k must not poison P V (its P is 0).
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        }
        .result()
        .during(format!(
            "encoding a tensor map of {dims:?} (innermost first) with a box of {boxdim:?}"
        ))?;
        // SAFETY: the driver returned success, so it wrote the map.
        Ok(TensorMap(unsafe { map.assume_init() }))
    }
}

// SAFETY: 128 bytes the driver wrote (`TensorMap` in `tma.cuh`), passed by value.
unsafe impl DeviceRepr for TensorMap {}

impl AttnTensorMaps {
    /// Q and O in boxes of `q_rows` query rows, K and V in boxes of `kv_rows` keys, for
    /// the buffers `params` names.
    pub fn new(params: &AttnParams, dtype: DType, q_rows: u32, kv_rows: u32) -> Result<Self> {
        let (b, h, kvh, d) = (
            params.batch as usize,
            params.heads as usize,
            params.kv_heads as usize,
            params.head_dim as usize,
        );
        let q_shape = (b, params.seqlen_q as usize, h, d);
        let kv_shape = (b, params.seqlen_k as usize, kvh, d);
        Ok(AttnTensorMaps {
            q: TensorMap::bshd(params.q, dtype, q_shape, q_rows)?,
            k: TensorMap::bshd(params.k, dtype, kv_shape, kv_rows)?,
            v: TensorMap::bshd(params.v, dtype, kv_shape, kv_rows)?,
            o: TensorMap::bshd(params.o, dtype, q_shape, q_rows)?,
        })
    }
}

/// The four maps the Hopper backward's main kernel takes after its `BwdParams`, in
/// `BwdTensorMaps`'s order (`hopper/backward_tiles.cuh`): Q and dO in boxes of `q_rows`
/// query rows, K and V in boxes of `kv_rows` keys.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BackwardTensorMaps {
    pub q: TensorMap,
    pub k: TensorMap,
    pub v: TensorMap,
    pub d_o: TensorMap,
}

// SAFETY: as for `AttnTensorMaps`: 4 x 128 bytes the driver wrote, laid out as the C struct
// (pinned by its static_assert and by the test below), passed by value.
unsafe impl DeviceRepr for BackwardTensorMaps {}

impl BackwardTensorMaps {
    /// The maps of the buffers `params` names (its forward's Q, K and V, and its dO).
    pub fn new(
        params: &crate::backward::BwdParams,
        dtype: DType,
        q_rows: u32,
        kv_rows: u32,
    ) -> Result<Self> {
        let f = &params.fwd;
        let (b, h, kvh, d) = (
            f.batch as usize,
            f.heads as usize,
            f.kv_heads as usize,
            f.head_dim as usize,
        );
        let q_shape = (b, f.seqlen_q as usize, h, d);
        let kv_shape = (b, f.seqlen_k as usize, kvh, d);
        Ok(BackwardTensorMaps {
            q: TensorMap::bshd(f.q, dtype, q_shape, q_rows)?,
            k: TensorMap::bshd(f.k, dtype, kv_shape, kv_rows)?,
            v: TensorMap::bshd(f.v, dtype, kv_shape, kv_rows)?,
            d_o: TensorMap::bshd(params.d_o, dtype, q_shape, q_rows)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `backward_tiles.cuh` static_asserts the same: four 128-byte maps, dO last.
    #[test]
    fn backward_maps_match_the_c_struct() {
        assert_eq!(std::mem::size_of::<BackwardTensorMaps>(), 512);
        assert_eq!(std::mem::offset_of!(BackwardTensorMaps, k), 128);
        assert_eq!(std::mem::offset_of!(BackwardTensorMaps, d_o), 384);
    }

    /// `tma.cuh` static_asserts the same: four 128-byte maps, in order, after AttnParams.
    #[test]
    fn layout_matches_the_c_struct() {
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
        assert_eq!(std::mem::size_of::<AttnTensorMaps>(), 512);
        assert_eq!(std::mem::offset_of!(AttnTensorMaps, k), 128);
        assert_eq!(std::mem::offset_of!(AttnTensorMaps, o), 384);
    }
}
