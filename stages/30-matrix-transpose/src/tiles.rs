// Stage 30's tile shape (stage 24's), the one definition: `lib.rs` launches with it, and `build.rs` passes
// it to nvcc, where the kernel asserts its own constants equal it.
/// A producer warpgroup and two consumer warpgroups of 4 warps; each consumer owns 64 query
/// rows, at head dim 128 (the one its transpose is written for).
pub const WARPS: u32 = 12;
pub const BLOCK_Q: u32 = 128;
/// Keys per tile: the N of S = Q K^T's wgmma, and V^T's rows, 128 codes (one 128-byte box).
pub const BLOCK_KV: u32 = 128;
/// Slots of the TMA ring.
pub const NSTAGES: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("BLOCK_KV", BLOCK_KV),
    ("NSTAGES", NSTAGES),
];
