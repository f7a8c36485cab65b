// decode.cuh: the one argument of the decode kernels (stage 14 on), mirrored from
// harness/src/decode/mod.rs, and where a key of a sequence lives in a contiguous or a
// paged K/V cache. Book: "Stage 14: flash decode".
#pragma once
#include "common.cuh"

namespace flashlab {

// AttnParams as every stage has it (attn.seqlen_k is the contiguous cache's capacity),
// then what decode adds: a length per sequence, the page table, the split results.
struct DecodeParams {
    AttnParams attn;
    const int* seqlens_k;     // [batch]
    const int* block_table;   // [batch, pages_per_seq], null for a contiguous cache
    float* o_partial;         // [splits, batch, seqlen_q, heads, D] fp32, each split's normalized O
    float* lse_partial;       // [splits, batch, heads, seqlen_q] fp32, natural log
    int page_size, page_shift, pages_per_seq;
    int num_splits;
    int tiles_per_split;      // key tiles per split
    int group;                // query heads per K/V head
};
static_assert(offsetof(DecodeParams, seqlens_k) == 104 && offsetof(DecodeParams, block_table) == 112 &&
                  offsetof(DecodeParams, o_partial) == 120 && offsetof(DecodeParams, lse_partial) == 128 &&
                  offsetof(DecodeParams, page_size) == 136 && offsetof(DecodeParams, page_shift) == 140 &&
                  offsetof(DecodeParams, pages_per_seq) == 144 && offsetof(DecodeParams, num_splits) == 148 &&
                  offsetof(DecodeParams, tiles_per_split) == 152 && offsetof(DecodeParams, group) == 156 &&
                  sizeof(DecodeParams) == 160,
              "DecodeParams differs from harness/src/decode/mod.rs");

// ANCHOR: cache_row
// Element offset of key j of sequence b, K/V head kv_head, in the cache. Contiguous: row j
// of the sequence's own [capacity] rows. Paged: row j % page_size of the page the block
// table names for j / page_size (both by shift and mask: pages are powers of two).
FL_HOST_DEVICE long long cache_row_offset(const DecodeParams& p, int b, int j, int kv_head) {
    long long row;
    if (p.block_table == nullptr) {
        row = static_cast<long long>(b) * p.attn.seqlen_k + j;
    } else {
        const int page = p.block_table[static_cast<long long>(b) * p.pages_per_seq + (j >> p.page_shift)];
        row = static_cast<long long>(page) * p.page_size + (j & (p.page_size - 1));
    }
    return (row * p.attn.kv_heads + kv_head) * p.attn.head_dim;
}
// ANCHOR_END: cache_row

// GQA packing: packed row r of K/V head kv_head is query token r / group of query head
// kv_head * group + r % group, so a tile's rows are every head of the group that reads
// this K/V head, token by token.
struct PackedRow {
    int token, head;
};
FL_HOST_DEVICE PackedRow unpack_row(const DecodeParams& p, int kv_head, int r) {
    return {r / p.group, kv_head * p.group + r % p.group};
}

}  // namespace flashlab

// Exports body<T, D> under `<prefix>_<bf16|f16>_d<D>` taking DecodeParams.
#define FLASHLAB_EXPORT_DECODE(prefix, body, T, tname, D, threads)                                                       \
    extern "C" __global__ void __launch_bounds__(threads, 1) prefix##_##tname##_d##D(const flashlab::DecodeParams p) { \
        body<T, D>(p);                                                                                                   \
    }
#define FLASHLAB_EXPORT_ALL_DECODE(prefix, body, threads)                 \
    FLASHLAB_EXPORT_DECODE(prefix, body, __nv_bfloat16, bf16, 64, threads)  \
    FLASHLAB_EXPORT_DECODE(prefix, body, __nv_bfloat16, bf16, 128, threads) \
    FLASHLAB_EXPORT_DECODE(prefix, body, __half, f16, 64, threads)          \
    FLASHLAB_EXPORT_DECODE(prefix, body, __half, f16, 128, threads)
