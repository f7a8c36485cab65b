// Stage 22's tile shapes, the one definition: `lib.rs` launches with them, and `build.rs`
// passes them to nvcc, where the kernels assert their own constants equal them.
/// The main kernel: eight warps, each owning 16 of the block's keys (the m16 rows of its
/// products), so dK and dV stay in its registers for the whole launch.
pub const WARPS: u32 = 8;
/// Keys a block owns: 16 per warp, FlashAttention-2's 128, which halves dQ's adds per FLOP
/// of 64 keys (1.13-1.17 times faster at d128 on an H100, 1.04 at d64:
/// `bench/experiments/2026-11-27-backward-dq-atomics/`). Grid: (ceil(seqlen_k / BLOCK_KV),
/// kv_heads, batch).
pub const BLOCK_KV: u32 = 128;
/// Query rows per step of the main kernel's loop: the N of S^T = K Q^T and dP^T = V dO^T,
/// the k of dV += P^T dO and dK += dS^T Q; dQ = dS K's 64 rows are split among the warps, 16
/// rows by half the columns each.
pub const BLOCK_Q: u32 = 64;
/// Slots of the cp.async ring of Q and dO tiles: the next step's arrive during this one.
pub const NSTAGES: u32 = 2;
/// The preprocess (D = rowsum(dO o O), and dQ's accumulator and semaphores zeroed): query
/// rows per block, a multiple of 16 (one semaphore per 16 rows), and its threads.
/// Grid: (ceil(seqlen_q / PRE_ROWS), heads, batch).
pub const PRE_ROWS: u32 = 64;
pub const PRE_THREADS: u32 = 128;
/// The postprocess (dQ = scale times its accumulator, rounded): query rows per block and
/// its threads. Grid: (ceil(seqlen_q / POST_ROWS), heads, batch).
pub const POST_ROWS: u32 = 64;
pub const POST_THREADS: u32 = 128;

/// The main kernel's dynamic shared memory at `head_dim`: K and V, NSTAGES slots of Q and of
/// dO (16-bit elements), the dS^T tile [BLOCK_KV][BLOCK_Q] (16-bit), and NSTAGES slots of the
/// query rows' LSE and D (fp32). 145 KiB at head dim 128 (one block, 8 warps an SM), 81 KiB at 64.
#[allow(dead_code)]
pub const fn main_smem_bytes(head_dim: usize) -> u32 {
    let d = head_dim as u32;
    (2 * BLOCK_KV * d + 2 * NSTAGES * BLOCK_Q * d + BLOCK_KV * BLOCK_Q) * 2
        + NSTAGES * 2 * BLOCK_Q * 4
}

pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_KV", BLOCK_KV),
    ("BLOCK_Q", BLOCK_Q),
    ("NSTAGES", NSTAGES),
    ("PRE_ROWS", PRE_ROWS),
    ("PRE_THREADS", PRE_THREADS),
    ("POST_ROWS", POST_ROWS),
    ("POST_THREADS", POST_THREADS),
    ("MAIN_SMEM_BYTES_D64", main_smem_bytes(64)),
    ("MAIN_SMEM_BYTES_D128", main_smem_bytes(128)),
];
