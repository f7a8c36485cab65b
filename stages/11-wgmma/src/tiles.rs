// Stage 11's tile shape, the one definition: `lib.rs` launches with it, and `build.rs`
// passes it to nvcc, where the kernel asserts its own constants equal it.
/// Two warpgroups of 4 warps, each owning 64 query rows (the M of one wgmma): stage 10's
/// 128-row Q tile.
pub const WARPS: u32 = 8;
pub const BLOCK_Q: u32 = 128;
/// Keys per tile, stage 10's: the N of S = Q K^T's wgmma, 32 fp32 registers a thread.
pub const BLOCK_KV: u32 = 64;
/// Slots of the TMA ring. At d128: Q 32 KiB + 2 x (K + V) 32 KiB = 96 KiB.
pub const NSTAGES: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("BLOCK_KV", BLOCK_KV),
    ("NSTAGES", NSTAGES),
];
