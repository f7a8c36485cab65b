// Stage 14's tile shape, the one definition: `lib.rs` launches with it, and `build.rs`
// passes it to nvcc, where the kernel asserts its own constants equal it.
pub const WARPS: u32 = 4;
/// Packed query rows per block (a group's heads times the new tokens): one m16 tile.
pub const ROWS: u32 = 16;
/// Keys per K/V tile: 16 per warp.
pub const BLOCK_KV: u32 = 64;
/// Slots of the cp.async ring: NSTAGES - 1 tiles in flight while one is computed on.
pub const NSTAGES: u32 = 4;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("ROWS", ROWS),
    ("BLOCK_KV", BLOCK_KV),
    ("NSTAGES", NSTAGES),
];
