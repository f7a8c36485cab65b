// Stage 10's tile shape, the one definition: `lib.rs` launches with it, and `build.rs`
// passes it to nvcc, where the kernel asserts its own constants equal it.
pub const WARPS: u32 = 4;
pub const BLOCK_Q: u32 = 128;
pub const BLOCK_KV: u32 = 64;
/// Slots of the TMA ring: K/V tiles resident at once. Any depth works; two keep the
/// 96 KiB of stage 9 at d128, so two blocks still share an SM.
pub const NSTAGES: u32 = 2;
pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_Q", BLOCK_Q),
    ("BLOCK_KV", BLOCK_KV),
    ("NSTAGES", NSTAGES),
];
