// Stage 31's tile shape (stage 28's), the one definition: `lib.rs` launches with it, and `build.rs` passes
// it to nvcc, where the kernel asserts its own constants equal it.
/// At head dims 64 and 128: a producer warpgroup and three consumer warpgroups of 4 warps,
/// each consumer owning 64 query rows.
pub const WARPS: u32 = 16;
pub const BLOCK_Q: u32 = 192;
/// Keys per tile at head dim 128 (and 256): the N of S = Q K^T's wgmma, and V^T's rows, 128
/// codes (one 128-byte box), as in stage 20.
pub const BLOCK_KV: u32 = 128;
/// At head dim 64: stage 27's 192 keys, V^T's rows three boxes of 64 codes.
pub const BLOCK_KV_D64: u32 = 192;
/// O's columns one P V product makes at head dim 128: two halves of 64, so that a consumer
/// thread holds 32 registers of one tile's P V, not 64.
pub const PV_PART_D128: u32 = 64;
/// At head dim 256 stage 27's (and stage 20's) tile: two consumers of 64 rows.
pub const WARPS_D256: u32 = 12;
pub const BLOCK_Q_D256: u32 = 128;
/// Slots of the TMA ring.
pub const NSTAGES: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("BLOCK_KV", BLOCK_KV),
    ("BLOCK_KV_D64", BLOCK_KV_D64),
    ("PV_PART_D128", PV_PART_D128),
    ("WARPS_D256", WARPS_D256),
    ("BLOCK_Q_D256", BLOCK_Q_D256),
    ("NSTAGES", NSTAGES),
];
