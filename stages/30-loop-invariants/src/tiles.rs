// Stage 30's tile shape (stage 29's, stage 26's), the one definition: `lib.rs` launches with it, and `build.rs`
// passes it to nvcc, where the kernel asserts its own constants equal it.
/// At head dims 128 and 256: a producer warpgroup and two consumer warpgroups of 4 warps;
/// each consumer owns 64 query rows.
pub const WARPS: u32 = 12;
pub const BLOCK_Q: u32 = 128;
/// At head dim 64, where a consumer needs fewer registers: three consumers.
pub const WARPS_D64: u32 = 16;
pub const BLOCK_Q_D64: u32 = 192;
/// Keys per tile, the N of S = Q K^T's wgmma: S is 64 fp32 registers a consumer thread.
pub const BLOCK_KV: u32 = 128;
/// At head dim 256, where O is 128 registers a consumer thread: 80 keys (S is 40), and
/// Q 64 KiB + 2 x (K + V) 80 KiB = 224 KiB of shared memory.
pub const BLOCK_KV_D256: u32 = 80;
/// Slots of the TMA ring.
pub const NSTAGES: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("WARPS_D64", WARPS_D64),
    ("BLOCK_Q_D64", BLOCK_Q_D64),
    ("BLOCK_KV", BLOCK_KV),
    ("BLOCK_KV_D256", BLOCK_KV_D256),
    ("NSTAGES", NSTAGES),
];
