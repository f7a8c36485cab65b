// hopper/scheduler.cuh: which query rows of which head a block computes, and how many K/V
// tiles they see. Every role of a block derives its loop from the same BlockWork, so the
// producer loads exactly the tiles the consumers read. Book: "Stage 12: warp
// specialization", section "Longest rows first".
#pragma once
#include "../common.cuh"

namespace flashlab {

// ANCHOR: block_work
struct BlockWork {
    int q_start;  // the block's first query row
    int h, b, kv_head;
    int n_tiles;  // K/V tiles of BLOCK_KV keys its rows see
};

// The tiles a block of query rows q_start .. q_start + BLOCK_Q - 1 sees: all of them, or
// with a causal mask up to its last row's last key (none for a block whose rows see none).
template <int BLOCK_Q, int BLOCK_KV>
__device__ __forceinline__ int kv_tiles(const AttnParams& p, int q_start) {
    int kv_end = p.seqlen_k;
    if (p.causal) kv_end = max(0, min(p.seqlen_k, causal_key_end(p, min(q_start + BLOCK_Q, p.seqlen_q) - 1)));
    return ceil_div(kv_end, BLOCK_KV);
}

// Block (x, y, z) takes query tile x of head y of batch z.
template <int BLOCK_Q, int BLOCK_KV>
__device__ __forceinline__ BlockWork in_order(const AttnParams& p) {
    BlockWork w;
    w.q_start = blockIdx.x * BLOCK_Q;
    w.h = blockIdx.y;
    w.b = blockIdx.z;
    w.kv_head = kv_head_of(p, w.h);
    w.n_tiles = kv_tiles<BLOCK_Q, BLOCK_KV>(p, w.q_start);
    return w;
}
// ANCHOR_END: block_work

// ANCHOR: longest_first
// The grid is (query tiles, heads, batch). The GPU starts blocks in order of their linear
// index, so handing the last query tiles of every head out first, which see the most keys
// under a causal mask, lets the short ones fill the last wave instead of the long ones
// running alone at the end. Without a mask every block is as long as any other, and the
// grid's own order is better: the blocks that run at the same time then read the K and V
// of two or three heads, which the 50 MB L2 cache holds for all of them, where the longest
// tiles of every head at once would stream all of it (16 heads of 8192 keys at d128 are
// 64 MiB of K and V).
template <int BLOCK_Q, int BLOCK_KV>
__device__ __forceinline__ BlockWork longest_first(const AttnParams& p) {
    if (!p.causal) return in_order<BLOCK_Q, BLOCK_KV>(p);
    const int linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int heads_batches = gridDim.y * gridDim.z;
    const int head_batch = linear % heads_batches;
    BlockWork w;
    w.q_start = (gridDim.x - 1 - linear / heads_batches) * BLOCK_Q;
    w.h = head_batch % gridDim.y;
    w.b = head_batch / gridDim.y;
    w.kv_head = kv_head_of(p, w.h);
    w.n_tiles = kv_tiles<BLOCK_Q, BLOCK_KV>(p, w.q_start);
    return w;
}
// ANCHOR_END: longest_first

}  // namespace flashlab
