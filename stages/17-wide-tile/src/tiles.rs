// Stage 17's tile shape, the one definition: `lib.rs` launches with it, and `build.rs`
// passes it to nvcc, where the kernel asserts its own constants equal it.
/// Two warpgroups of 4 warps, each owning 64 query rows (the M of one wgmma).
pub const WARPS: u32 = 8;
pub const BLOCK_Q: u32 = 128;
/// Keys per tile, the N of S = Q K^T's wgmma: S is 64 fp32 registers a thread.
pub const BLOCK_KV: u32 = 128;
/// Slots of the TMA ring. At d128: Q 32 KiB + 2 x (K + V) 64 KiB = 160 KiB, one block an SM.
pub const NSTAGES: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("BLOCK_KV", BLOCK_KV),
    ("NSTAGES", NSTAGES),
];
