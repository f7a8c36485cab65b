// Stage 14's tile shape, the one definition: `lib.rs` launches with it, and `build.rs`
// passes it to nvcc, where the kernel asserts its own constants equal it.
pub const WARPS: u32 = 4;
/// Packed query rows per block (a group's heads times the new tokens): one m16 tile.
pub const ROWS: u32 = 16;
/// Keys per K/V tile: 16 per warp.
pub const BLOCK_KV: u32 = 64;
/// Slots of the cp.async ring: NSTAGES - 1 tiles in flight while one is computed on.
/// Three (100 KiB at D = 128) let two blocks share an SM; four or six, one block per SM,
/// measured no faster at any split count (book: "Stage 14: flash decode").
pub const NSTAGES: u32 = 3;
/// Above head dim 128 one block fills an SM, and each 16 keys get two warps, each with half
/// of O's columns: two warps per scheduler instead of one, 15-22% faster at D = 256 on
/// H200s (book: "Stage 14: flash decode", "Head dim 256").
pub const WIDE_COL_SPLIT: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("ROWS", ROWS),
    ("BLOCK_KV", BLOCK_KV),
    ("NSTAGES", NSTAGES),
    ("WIDE_COL_SPLIT", WIDE_COL_SPLIT),
];
