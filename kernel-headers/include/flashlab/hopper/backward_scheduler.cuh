// hopper/backward_scheduler.cuh: which keys a block of the Hopper backward owns, and the
// query blocks it walks for them. Every role derives its loop from the same BwdWork, so the
// producer loads exactly the tiles the MMA warpgroups read and the writer adds exactly the
// dQ tiles they write. Book: "Stage 23: the backward on Hopper", section "Causal blocks
// longest first".
#pragma once
#include "../common.cuh"

namespace flashlab {

// ANCHOR: bwd_work
struct BwdWork {
    int n_block;  // the key block's index among its head's: its place in the deterministic order
    int n_start;  // its first key
    int kv_head, b;
    int h_first, group;  // the query heads that read this K/V head: h_first .. h_first + group - 1
    int m_first, m_end;  // the query blocks that see any of its keys, for each of those heads
    __device__ __forceinline__ int steps() const { return group * (m_end - m_first); }
};

// The query blocks of BLOCK_M rows that see keys n_start .. n_start + BLOCK_N - 1: all of
// them, or with the causal mask (bottom-right aligned) those from the one holding row
// n_start - (seqlen_k - seqlen_q) on, the first row that sees key n_start. That row is below
// seqlen_q because n_start < seqlen_k, so every block has at least one query block.
template <int BLOCK_M, int BLOCK_N>
__device__ __forceinline__ BwdWork key_block_work(const AttnParams& p, int n_block, int kv_head, int b) {
    BwdWork w;
    w.n_block = n_block;
    w.n_start = n_block * BLOCK_N;
    w.kv_head = kv_head;
    w.b = b;
    w.group = p.heads / p.kv_heads;
    w.h_first = kv_head * w.group;
    w.m_first = p.causal ? max(0, w.n_start - (p.seqlen_k - p.seqlen_q)) / BLOCK_M : 0;
    w.m_end = ceil_div(p.seqlen_q, BLOCK_M);
    return w;
}
// ANCHOR_END: bwd_work

// ANCHOR: longest_first
// The grid is (key blocks, K/V heads, batch). Causal, key block 0 sees every query block and
// the last key block the fewest (under the bottom-right diagonal, only the last rows see the
// last keys): the forward's case turned around. So block i takes key block i / (heads x
// batch), of head-and-batch i % (heads x batch): the GPU starts blocks in order of their
// linear index, and key block 0 of every head starts first, the short last ones fill the
// tail. Without a mask every block is as long, and the grid's own order keeps the blocks
// that run together on the same heads, whose Q and dO the L2 cache then serves to all.
// Either way a block's key block index orders it after every block of its head with a
// smaller one, which the deterministic order's waits rely on.
template <int BLOCK_M, int BLOCK_N>
__device__ __forceinline__ BwdWork bwd_longest_first(const AttnParams& p) {
    if (!p.causal) return key_block_work<BLOCK_M, BLOCK_N>(p, blockIdx.x, blockIdx.y, blockIdx.z);
    const int linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int heads_batches = gridDim.y * gridDim.z;
    const int head_batch = linear % heads_batches;
    return key_block_work<BLOCK_M, BLOCK_N>(p, linear / heads_batches, head_batch % gridDim.y, head_batch / gridDim.y);
}
// ANCHOR_END: longest_first

// ANCHOR: for_each_query_block
// The block's steps in order: each query head of the group, and for it each query block that
// sees the keys. `f(h, m, step)`; step counts from 0 across heads. One flat loop, not
// unrolled: a step is long, and the fewer counters live through it the better (the producer
// has 24 registers).
template <typename F>
__device__ __forceinline__ void for_each_query_block(const BwdWork& w, F&& f) {
    const int steps = w.steps();
    int h = w.h_first, m = w.m_first;
#pragma unroll 1
    for (int step = 0; step < steps; ++step) {
        f(h, m, step);
        if (++m == w.m_end) {
            m = w.m_first;
            ++h;
        }
    }
}
// ANCHOR_END: for_each_query_block

}  // namespace flashlab
