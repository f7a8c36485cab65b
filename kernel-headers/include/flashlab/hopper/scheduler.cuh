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

// ANCHOR: work_at
// Work tile `linear` of the list of (query tile, head, batch), `q_tiles` query tiles a head:
// without a mask in the grid's own order, query tiles first; under a causal mask the last
// query tiles of every head first, as longest_first hands them out.
template <int BLOCK_Q, int BLOCK_KV>
__device__ __forceinline__ BlockWork work_at(const AttnParams& p, int linear, int q_tiles) {
    const int heads_batches = p.heads * p.batch;
    const int q_tile = p.causal ? q_tiles - 1 - linear / heads_batches : linear % q_tiles;
    const int head_batch = p.causal ? linear % heads_batches : linear / q_tiles;
    BlockWork w;
    w.q_start = q_tile * BLOCK_Q;
    w.h = head_batch % p.heads;
    w.b = head_batch / p.heads;
    w.kv_head = kv_head_of(p, w.h);
    w.n_tiles = kv_tiles<BLOCK_Q, BLOCK_KV>(p, w.q_start);
    return w;
}
// ANCHOR_END: work_at

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
    return work_at<BLOCK_Q, BLOCK_KV>(p, blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), gridDim.x);
}
// ANCHOR_END: longest_first

// ANCHOR: persistent_scheduler
// A persistent grid (stage 24): one block an SM, each walking the list of work tiles in
// strides of the grid, blockIdx.x, blockIdx.x + gridDim.x, ... Under a causal mask the list
// runs longest first, and every other round of the walk goes backwards across the blocks,
// so the block that took the longest tile of one round takes the shortest of the next: a
// plain stride would give block 0 the longest tile of every round. Every role of a block
// walks the same list, so none has to tell the others what comes next.
// Book: "Stage 24: a persistent kernel", section "The scheduler".
template <int BLOCK_Q, int BLOCK_KV>
struct PersistentScheduler {
    int q_tiles, tiles;  // query tiles a head; work tiles in all

    __device__ explicit PersistentScheduler(const AttnParams& p)
        : q_tiles(ceil_div(p.seqlen_q, BLOCK_Q)), tiles(ceil_div(p.seqlen_q, BLOCK_Q) * p.heads * p.batch) {}

    // Where this block's i-th work tile stands in the list; `tiles` or more when it has none:
    // a round past the end is past it for every block.
    __device__ __forceinline__ int rank(const AttnParams& p, int i) const {
        const int backwards = p.causal && i % 2 == 1;
        return i * gridDim.x + (backwards ? gridDim.x - 1 - blockIdx.x : blockIdx.x);
    }
    __device__ __forceinline__ bool done(int rank) const { return rank >= tiles; }
    __device__ __forceinline__ BlockWork work(const AttnParams& p, int rank) const {
        return work_at<BLOCK_Q, BLOCK_KV>(p, rank, q_tiles);
    }
};
// ANCHOR_END: persistent_scheduler

}  // namespace flashlab
