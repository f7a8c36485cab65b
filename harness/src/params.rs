//! The one argument every kernel takes, mirrored from `kernel-headers/include/flashlab/common.cuh`.

use crate::{Error, Problem, Result};

/// `struct AttnParams` of `common.cuh`, field for field: every stage's kernels share this
/// one signature, so the harness launches them all the same way. The layout is pinned on
/// both sides, offset by offset: by `static_assert`s next to the struct in
/// `kernel-headers/include/flashlab/common.cuh` and by this module's `layout_matches_the_c_struct`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AttnParams {
    pub q: u64,
    pub k: u64,
    pub v: u64,
    pub o: u64,
    pub lse: u64,
    pub scratch: u64,
    pub batch: i32,
    pub heads: i32,
    pub kv_heads: i32,
    pub seqlen_q: i32,
    pub seqlen_k: i32,
    pub head_dim: i32,
    pub causal: i32,
    pub scale: f32,
    pub scale_log2: f32,
    /// Where a timeline kernel records its phases ([`crate::timeline`]); 0 for every other run.
    pub timeline: u64,
    pub timeline_blocks: i32,
    pub timeline_stride: i32,
}

// SAFETY: plain old data with the C layout `common.cuh` declares; pointers are device
// addresses passed by value.
unsafe impl cudarc::driver::DeviceRepr for AttnParams {}

impl AttnParams {
    /// The scalar fields for a problem; `InvalidProblem` naming the size that does not fit
    /// the kernels' `int`.
    pub fn for_problem(p: &Problem) -> Result<AttnParams> {
        let int = |name: &str, value: usize| {
            i32::try_from(value).map_err(|_| {
                Error::InvalidProblem(format!(
                    "{name} is {value}, more than the kernels' int holds ({})",
                    i32::MAX
                ))
            })
        };
        let scale = p.softmax_scale();
        Ok(AttnParams {
            batch: int("batch", p.shape.batch)?,
            heads: int("heads", p.shape.heads)?,
            kv_heads: int("kv_heads", p.shape.kv_heads)?,
            seqlen_q: int("seqlen_q", p.shape.seqlen_q)?,
            seqlen_k: int("seqlen_k", p.shape.seqlen_k)?,
            head_dim: int("head_dim", p.shape.head_dim)?,
            causal: i32::from(p.causal),
            scale,
            // exp(x * scale) == exp2(x * scale * log2(e)): the kernels use the cheaper exp2.
            scale_log2: scale * std::f32::consts::LOG2_E,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_past_an_int_are_refused_by_name() {
        let mut p = Problem::new(1, 2, 1024, 64);
        let params = AttnParams::for_problem(&p).unwrap();
        assert_eq!(
            (params.heads, params.seqlen_k, params.head_dim),
            (2, 1024, 64)
        );
        p.shape.seqlen_k = i32::MAX as usize + 1;
        let err = AttnParams::for_problem(&p).unwrap_err().to_string();
        assert!(
            err.contains("seqlen_k is 2147483648, more than the kernels' int holds"),
            "{err}"
        );
    }

    /// Every offset and the size, the same numbers `common.cuh`'s `static_assert`s pin on
    /// the C++ side: a field moved on one side only would have every kernel read the wrong
    /// bytes without any error, so each side fails on its own (nvcc at compile time, this
    /// test here) rather than relying on the other.
    #[test]
    fn layout_matches_the_c_struct() {
        use std::mem::offset_of;
        let offsets = [
            ("q", offset_of!(AttnParams, q), 0),
            ("k", offset_of!(AttnParams, k), 8),
            ("v", offset_of!(AttnParams, v), 16),
            ("o", offset_of!(AttnParams, o), 24),
            ("lse", offset_of!(AttnParams, lse), 32),
            ("scratch", offset_of!(AttnParams, scratch), 40),
            ("batch", offset_of!(AttnParams, batch), 48),
            ("heads", offset_of!(AttnParams, heads), 52),
            ("kv_heads", offset_of!(AttnParams, kv_heads), 56),
            ("seqlen_q", offset_of!(AttnParams, seqlen_q), 60),
            ("seqlen_k", offset_of!(AttnParams, seqlen_k), 64),
            ("head_dim", offset_of!(AttnParams, head_dim), 68),
            ("causal", offset_of!(AttnParams, causal), 72),
            ("scale", offset_of!(AttnParams, scale), 76),
            ("scale_log2", offset_of!(AttnParams, scale_log2), 80),
            ("timeline", offset_of!(AttnParams, timeline), 88),
            (
                "timeline_blocks",
                offset_of!(AttnParams, timeline_blocks),
                96,
            ),
            (
                "timeline_stride",
                offset_of!(AttnParams, timeline_stride),
                100,
            ),
        ];
        for (field, got, want) in offsets {
            assert_eq!(got, want, "offset of AttnParams::{field}");
        }
        // Six 8-byte pointers, seven ints and two floats: 84 bytes, padded to 88; then the
        // timeline's pointer and two ints.
        assert_eq!(std::mem::size_of::<AttnParams>(), 104);
        assert_eq!(std::mem::align_of::<AttnParams>(), 8);
    }
}
