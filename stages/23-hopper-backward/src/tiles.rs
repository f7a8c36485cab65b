// Stage 23's tile shapes, the one definition: `lib.rs` launches with them, and `build.rs`
// passes them to nvcc, where the kernels assert their own constants equal them.
//
// The budget (book: "Shared memory and registers"), at head dim 128 (64 in brackets):
// - Shared memory: K and V of the block's keys 32 KiB each [16], two ring slots of Q and of
//   dO 16 KiB each [8], two dS^T buffers of 128 keys x 64 queries 16 KiB each, the fp32 dQ
//   tile 32 KiB [16], the slots' LSE and D 1 KiB: 193 KiB [113], plus 1 KiB of alignment
//   slack, under the 227 KiB a block may have. One dS^T buffer would do with a second
//   barrier between the MMA warpgroups each step (neither may overwrite it before both have
//   read it for dQ); the room is there, so the second buffer saves the barrier.
// - Registers: 384 threads get 168 each at launch. An MMA thread holds dK and dV, 64 floats
//   each [32], S^T and dP^T, 32 each, P^T and dS^T packed as wgmma A operands, 16 each, and
//   its half of dQ, 32 [16], not all live at once: the MMA warpgroups take 240 with
//   setmaxnreg and the producer keeps 24 (24 + 2 x 240 = 3 x 168). ptxas reports no spills.
/// Threads: a producer warpgroup (warp 0 loads, warp 1 writes dQ) and two MMA warpgroups.
pub const WARPS: u32 = 12;
/// Keys a block owns, 64 per MMA warpgroup: the M of S^T, dP^T, dV and dK, the k of dQ.
/// Grid: (ceil(seqlen_k / BLOCK_N), kv_heads, batch), handed out longest first when causal.
pub const BLOCK_N: u32 = 128;
/// Query rows per step: the N of S^T = K Q^T and dP^T = V dO^T, the k of dV and dK, the M
/// of dQ = dS K (one wgmma's 64 rows), and the rows of each TMA box of Q and dO.
pub const BLOCK_M: u32 = 64;
/// Slots of the Q/dO ring: step s + 1's tiles land during step s.
pub const NSTAGES: u32 = 2;
/// The preprocess (D = rowsum(dO o O), dQ's accumulator and the semaphores zeroed): query
/// rows per block and its threads. Grid: (ceil(seqlen_q / PRE_ROWS), heads, batch).
pub const PRE_ROWS: u32 = 64;
pub const PRE_THREADS: u32 = 128;
/// The postprocess (dQ = scale times its accumulator, rounded): query rows per block and its
/// threads. Grid: (ceil(seqlen_q / POST_ROWS), heads, batch).
pub const POST_ROWS: u32 = 64;
pub const POST_THREADS: u32 = 128;

/// The main kernel's dynamic shared memory at `head_dim`, without the alignment slack: K and
/// V, NSTAGES slots of Q and of dO, two dS^T tiles (16-bit elements), the fp32 dQ tile and
/// NSTAGES x 2 x BLOCK_M floats of row terms. 193 KiB at head dim 128, 113 KiB at 64.
#[allow(dead_code)]
pub const fn main_smem_bytes(head_dim: usize) -> u32 {
    let d = head_dim as u32;
    (2 * BLOCK_N * d + 2 * NSTAGES * BLOCK_M * d + 2 * BLOCK_N * BLOCK_M) * 2
        + (BLOCK_M * d + NSTAGES * 2 * BLOCK_M) * 4
}

pub const SHARED_WITH_KERNEL: &[(&str, u32)] = &[
    ("WARPS", WARPS),
    ("BLOCK_N", BLOCK_N),
    ("BLOCK_M", BLOCK_M),
    ("NSTAGES", NSTAGES),
    ("PRE_ROWS", PRE_ROWS),
    ("PRE_THREADS", PRE_THREADS),
    ("POST_ROWS", POST_ROWS),
    ("POST_THREADS", POST_THREADS),
    ("MAIN_SMEM_BYTES_D64", main_smem_bytes(64)),
    ("MAIN_SMEM_BYTES_D128", main_smem_bytes(128)),
];
