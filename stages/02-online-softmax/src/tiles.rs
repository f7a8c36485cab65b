// Stage 2's tile shape, the one definition: `lib.rs` launches with it, and `build.rs`
// passes it to nvcc, where `kernels/online_softmax.cu` asserts its own constants equal it.
pub const BR: u32 = 64;
pub const BC: u32 = 64;
pub const THREADS: u32 = 256;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[("BR", BR), ("BC", BC), ("THREADS", THREADS)];
