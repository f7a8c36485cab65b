// Stage 23's tile shapes, the one definition: `lib.rs` launches with them, and `build.rs`
// passes them to nvcc, where the kernels assert their own constants equal them.
//
// The query rows a step, BLOCK_M, depend on the head dim, as FlashAttention-3's hopper/
// backward sets kBlockM: 128 at head dim 64, 64 at head dim 128.
//
// The budget (book: "Shared memory and registers"), at head dim 128 with 64 query rows a
// step (head dim 64 with 128 rows in brackets):
// - Shared memory: K and V of the block's keys 32 KiB each [16], two ring slots of Q and of
//   dO 16 KiB each [16], two dS^T buffers of 128 keys x BLOCK_M queries 16 KiB each [32],
//   the fp32 dQ tile 32 KiB [32], the slots' LSE and D 1 KiB [2]: 193 KiB [194], plus 1 KiB
//   of alignment slack, under the 227 KiB a block may have. One dS^T buffer would do with a
//   second barrier between the MMA warpgroups each step (neither may overwrite it before
//   both have read it for dQ); the room is there, so the second buffer saves the barrier.
// - Registers: 384 threads get 168 each at launch. An MMA thread holds dK and dV, 64 floats
//   each [32], S^T and dP^T, 32 each [64], P^T and dS^T packed as wgmma A operands, 16 each
//   [32], and its part of dQ, 32 [32], not all live at once: the MMA warpgroups take 240
//   with setmaxnreg and the producer keeps 24 (24 + 2 x 240 = 3 x 168). ptxas reports no
//   spills.
/// Threads: a producer warpgroup (warp 0 loads, warp 1 writes dQ) and two MMA warpgroups.
pub const WARPS: u32 = 12;
/// Keys a block owns, 64 per MMA warpgroup: the M of S^T, dP^T, dV and dK, the k of dQ.
/// Grid: (ceil(seqlen_k / BLOCK_N), kv_heads, batch), handed out longest first when causal.
pub const BLOCK_N: u32 = 128;
/// Query rows per step at head dim 64: the N of S^T = K Q^T and dP^T = V dO^T, the k of dV
/// and dK, the M of dQ = dS K (two wgmmas' 64 rows: each MMA warpgroup takes 64 of the rows
/// and all D columns), and the rows of each TMA box of Q and dO.
pub const BLOCK_M_D64: u32 = 128;
/// Query rows per step at head dim 128: the same, with dQ = dS K one wgmma's 64 rows (each
/// MMA warpgroup takes all 64 rows and D / 2 of the columns).
pub const BLOCK_M_D128: u32 = 64;
/// The query rows per step at `head_dim`.
pub const fn block_m(head_dim: usize) -> u32 {
    if head_dim == 64 {
        BLOCK_M_D64
    } else {
        BLOCK_M_D128
    }
}
/// Slots of the Q/dO ring: step s + 1's tiles land during step s.
pub const NSTAGES: u32 = 2;
/// The preprocess (D = rowsum(dO o O), dQ's accumulator and the semaphores zeroed): query
/// rows per block and its threads. Grid: (ceil(seqlen_q / PRE_ROWS), heads, batch). 128, so
/// that a preprocess block zeroes whole dQ tiles of either head dim, the last one's padding
/// rows included.
pub const PRE_ROWS: u32 = 128;
pub const PRE_THREADS: u32 = 128;
/// The postprocess (dQ = scale times its accumulator, rounded): query rows per block and its
/// threads. Grid: (ceil(seqlen_q / POST_ROWS), heads, batch).
pub const POST_ROWS: u32 = 64;
pub const POST_THREADS: u32 = 128;

/// The main kernel's dynamic shared memory at `head_dim`, without the alignment slack: K and
/// V, NSTAGES slots of Q and of dO, two dS^T tiles (16-bit elements), the fp32 dQ tile and
/// NSTAGES x 2 x BLOCK_M floats of row terms. 193 KiB at head dim 128, 194 KiB at 64.
#[allow(dead_code)]
pub const fn main_smem_bytes(head_dim: usize) -> u32 {
    let d = head_dim as u32;
    let m = block_m(head_dim);
    (2 * BLOCK_N * d + 2 * NSTAGES * m * d + 2 * BLOCK_N * m) * 2 + (m * d + NSTAGES * 2 * m) * 4
}

pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_N", BLOCK_N),
    ("BLOCK_M_D64", BLOCK_M_D64),
    ("BLOCK_M_D128", BLOCK_M_D128),
    ("NSTAGES", NSTAGES),
    ("PRE_ROWS", PRE_ROWS),
    ("PRE_THREADS", PRE_THREADS),
    ("POST_ROWS", POST_ROWS),
    ("POST_THREADS", POST_THREADS),
    ("MAIN_SMEM_BYTES_D64", main_smem_bytes(64)),
    ("MAIN_SMEM_BYTES_D128", main_smem_bytes(128)),
];
