//! The one argument every kernel takes, mirrored from `stages/include/flashlab/common.cuh`.

use crate::Problem;

/// `struct AttnParams` of `common.cuh`, field for field: every stage's kernels share this
/// one signature, so the harness launches them all the same way.
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
}

// SAFETY: plain old data with the C layout `common.cuh` declares; pointers are device
// addresses passed by value.
unsafe impl cudarc::driver::DeviceRepr for AttnParams {}

impl AttnParams {
    /// The scalar fields for a problem (sizes already validated to fit in i32).
    pub fn for_problem(p: &Problem) -> AttnParams {
        let scale = p.softmax_scale();
        AttnParams {
            batch: p.batch as i32,
            heads: p.heads as i32,
            kv_heads: p.kv_heads as i32,
            seqlen_q: p.seqlen_q as i32,
            seqlen_k: p.seqlen_k as i32,
            head_dim: p.head_dim as i32,
            causal: p.causal as i32,
            scale,
            // exp(x * scale) == exp2(x * scale * log2(e)): the kernels use the cheaper exp2.
            scale_log2: scale * std::f32::consts::LOG2_E,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_c_struct() {
        // Six 8-byte pointers, seven ints and two floats: 84 bytes, padded to 88.
        assert_eq!(std::mem::size_of::<AttnParams>(), 88);
        assert_eq!(std::mem::offset_of!(AttnParams, batch), 48);
        assert_eq!(std::mem::offset_of!(AttnParams, scale_log2), 80);
    }
}
