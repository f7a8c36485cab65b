//! The backward kernels' one argument, mirrored from `kernel-headers/include/flashlab/backward.cuh`.

use crate::{AttnParams, Problem};

/// `struct BwdParams` of `backward.cuh`, field for field: the forward's [`AttnParams`] (its
/// `o` and `lse` the forward's outputs), then what the backward alone reads and writes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BwdParams {
    pub fwd: AttnParams,
    pub d_o: u64,
    pub dq: u64,
    pub dk: u64,
    pub dv: u64,
    /// fp32, [`super::dq_accum_elements`] of them in the stage's own layout: dQ summed over
    /// the key blocks before its scale and rounding.
    pub dq_accum: u64,
    /// fp32 `[batch, heads, seqlen_q]`: D = rowsum(dO ∘ O).
    pub delta: u64,
    /// i32 `[batch, heads, ceil(seqlen_q / 16)]`: the deterministic order's counters.
    pub dq_semaphore: u64,
    pub deterministic: i32,
}

/// The device buffers of one backward run, as the kernels see them.
pub struct BackwardArgs {
    pub problem: Problem,
    pub params: BwdParams,
}

// SAFETY: plain old data with the C layout `backward.cuh` declares; pointers are device
// addresses passed by value.
unsafe impl cudarc::driver::DeviceRepr for BwdParams {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The offsets `backward.cuh`'s `static_assert` pins on the C++ side.
    #[test]
    fn layout_matches_the_c_struct() {
        use std::mem::offset_of;
        let offsets = [
            ("d_o", offset_of!(BwdParams, d_o), 104),
            ("dq", offset_of!(BwdParams, dq), 112),
            ("dk", offset_of!(BwdParams, dk), 120),
            ("dv", offset_of!(BwdParams, dv), 128),
            ("dq_accum", offset_of!(BwdParams, dq_accum), 136),
            ("delta", offset_of!(BwdParams, delta), 144),
            ("dq_semaphore", offset_of!(BwdParams, dq_semaphore), 152),
            ("deterministic", offset_of!(BwdParams, deterministic), 160),
        ];
        for (field, got, want) in offsets {
            assert_eq!(got, want, "offset of BwdParams::{field}");
        }
        assert_eq!(std::mem::size_of::<BwdParams>(), 168);
    }
}
