// Stage 25's tile shapes, the one definition: `lib.rs` launches with them, and `build.rs`
// passes them to nvcc, where the kernels assert their own constants equal them.
/// The main kernel: eight warps, in 2 x 4 (S, dP, dQ) and 4 x 2 (dV, dK) tiles of 32 rows.
pub const WARPS: u32 = 8;
/// Keys a block owns, as in stage 22. Grid: (ceil(seqlen_k / BLOCK_KV), kv_heads, batch).
pub const BLOCK_KV: u32 = 128;
/// Query rows per step of the main kernel's loop at `head_dim`: the M of S = Q K^T,
/// dP = dO V^T and dQ = dS K, the k of dV += P^T dO and dK += dS^T Q. FlashAttention-2's
/// tiles: 64 at d128, 128 at d64 (1.10-1.12 times 64 there on an H200:
/// `bench/experiments/2026-11-28-backward-warp-tiles/`).
pub const fn block_q(head_dim: usize) -> u32 {
    if head_dim == 64 { 128 } else { 64 }
}
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
/// dO (16-bit elements), the P and dS tiles [BLOCK_Q][BLOCK_KV] (16-bit), and NSTAGES slots
/// of the query rows' LSE and D (fp32). 161 KiB at head dim 128, 162 KiB at 64.
#[allow(dead_code)]
pub const fn main_smem_bytes(head_dim: usize) -> u32 {
    let (d, block_q) = (head_dim as u32, block_q(head_dim));
    (2 * BLOCK_KV * d + 2 * NSTAGES * block_q * d + 2 * block_q * BLOCK_KV) * 2
        + NSTAGES * 2 * block_q * 4
}

pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_KV", BLOCK_KV),
    ("BLOCK_Q_D64", block_q(64)),
    ("BLOCK_Q_D128", block_q(128)),
    ("NSTAGES", NSTAGES),
    ("PRE_ROWS", PRE_ROWS),
    ("PRE_THREADS", PRE_THREADS),
    ("POST_ROWS", POST_ROWS),
    ("POST_THREADS", POST_THREADS),
    ("MAIN_SMEM_BYTES_D64", main_smem_bytes(64)),
    ("MAIN_SMEM_BYTES_D128", main_smem_bytes(128)),
];
