// Stage 1's block shapes, the one definition: `lib.rs` launches with them, and `build.rs`
// passes them to nvcc, where `kernels/naive.cu` asserts its own constants equal them.
pub const TILE: u32 = 16;
pub const SOFTMAX_THREADS: u32 = 256;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] =
    &[("TILE", TILE), ("SOFTMAX_THREADS", SOFTMAX_THREADS)];
