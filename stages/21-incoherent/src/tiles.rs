// Stage 21's tile shape (stage 20's), the one definition: `lib.rs` launches with it, and `build.rs` passes
// it to nvcc, where the kernel asserts its own constants equal it.
/// A producer warpgroup and two consumer warpgroups of 4 warps; each consumer owns 64 query
/// rows, at head dims 64, 128 and 256 (stage 24: 128 alone).
pub const WARPS: u32 = 12;
pub const BLOCK_Q: u32 = 128;
/// Keys per tile: the N of S = Q K^T's wgmma, and V^T's rows, 128 codes (one 128-byte box).
pub const BLOCK_KV: u32 = 128;
/// Slots of the TMA ring.
pub const NSTAGES: u32 = 2;
/// The seed of the rotation's random signs, `FP8_ROTATION_SEED` of `fp8_quantize.cuh`
/// ("flashlab" in ASCII), which the check's emulation uses too.
pub const ROTATION_SEED: u64 = 0x666c_6173_686c_6162;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("BLOCK_KV", BLOCK_KV),
    ("NSTAGES", NSTAGES),
    ("ROTATION_SEED_LO", ROTATION_SEED as u32),
    ("ROTATION_SEED_HI", (ROTATION_SEED >> 32) as u32),
];
