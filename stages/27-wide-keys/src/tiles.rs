// Stage 27's tile shape (stage 20's, with more keys at head dim 64), the one definition:
// `lib.rs` launches with it, and `build.rs` passes it to nvcc, where the kernel asserts its
// own constants equal it.
/// A producer warpgroup and two consumer warpgroups of 4 warps; each consumer owns 64 query
/// rows, at head dims 64, 128 and 256.
pub const WARPS: u32 = 12;
pub const BLOCK_Q: u32 = 128;
/// Keys per tile at head dims 128 and 256: the N of S = Q K^T's wgmma, and V^T's rows, 128
/// codes (one 128-byte box), as in stage 20.
pub const BLOCK_KV: u32 = 128;
/// At head dim 64, where S is the consumer's largest block of registers and O its smallest:
/// 192 keys (S 96 registers a thread), V^T's rows three boxes of 64 codes.
pub const BLOCK_KV_D64: u32 = 192;
/// Slots of the TMA ring.
pub const NSTAGES: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("BLOCK_KV", BLOCK_KV),
    ("BLOCK_KV_D64", BLOCK_KV_D64),
    ("NSTAGES", NSTAGES),
];
