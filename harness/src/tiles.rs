// The streaming read's slab (`kernels/ceilings.cu`'s `ceiling_read`), the one definition:
// `sol.rs` launches with it, and `build.rs` passes it to nvcc, where the kernel asserts its
// own constants equal it.
/// Threads of a block of the streaming read, each block one contiguous slab.
pub const READ_THREADS: u32 = 256;
/// Independent 16-byte loads a thread: a slab is READ_THREADS * READ_LOADS chunks, 8 KiB.
/// Two or four a thread, in blocks of 128, 256 or 512, read within 1% of each other
/// (bench/experiments/2026-11-26-read-floor).
pub const READ_LOADS: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] =
    &[("READ_THREADS", READ_THREADS), ("READ_LOADS", READ_LOADS)];
