// decode.cuh: the one argument of the decode kernels (stage 14 on), mirrored from
// harness/src/decode/mod.rs, and where a key of a sequence lives in a contiguous or a
// paged K/V cache. The index arithmetic itself is in decode_index.cuh, which has no CUDA
// header, so that protocol-viz draws the book's figures with it. Book: "Stage 14: flash
// decode".
#pragma once
#include "common.cuh"
#include "decode_index.cuh"

namespace flashlab {

// AttnParams as every stage has it (attn.seqlen_k is the longest sequence's length, the
// bound of every seqlens_k[b]), then what decode adds: a length per sequence, the page
// table, the split results, and the contiguous cache's rows per sequence.
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
    int* split_counters;      // [batch * kv_heads, row tiles] splits done, zero between launches (stage 15 on)
    int cache_capacity;       // rows per sequence of a contiguous cache; 0 for a paged one
};
static_assert(offsetof(DecodeParams, seqlens_k) == 104 && offsetof(DecodeParams, block_table) == 112 &&
                  offsetof(DecodeParams, o_partial) == 120 && offsetof(DecodeParams, lse_partial) == 128 &&
                  offsetof(DecodeParams, page_size) == 136 && offsetof(DecodeParams, page_shift) == 140 &&
                  offsetof(DecodeParams, pages_per_seq) == 144 && offsetof(DecodeParams, num_splits) == 148 &&
                  offsetof(DecodeParams, tiles_per_split) == 152 && offsetof(DecodeParams, group) == 156 &&
                  offsetof(DecodeParams, split_counters) == 160 && offsetof(DecodeParams, cache_capacity) == 168 &&
                  sizeof(DecodeParams) == 176,
              "DecodeParams differs from harness/src/decode/mod.rs");

// ANCHOR: cache_row
// Element offset of key j of sequence b, K/V head kv_head, in the cache: the row
// decode_index.cuh's cache_row finds (contiguous, or through the page table), times the
// row's kv_heads * head_dim elements.
FL_HOST_DEVICE long long cache_row_offset(const DecodeParams& p, int b, int j, int kv_head) {
    const long long row = cache_row(p.block_table, p.pages_per_seq, p.page_size, p.page_shift, p.cache_capacity, b, j);
    return (row * p.attn.kv_heads + kv_head) * p.attn.head_dim;
}
// ANCHOR_END: cache_row

// GQA packing (decode_index.cuh): packed row r of K/V head kv_head's tile.
FL_HOST_DEVICE PackedRow unpack_row(const DecodeParams& p, int kv_head, int r) { return unpack_row(p.group, kv_head, r); }

}  // namespace flashlab

// Exports body<T, D> under `<prefix>_<bf16|f16>_d<D>` taking DecodeParams (common.cuh):
// the prefill stages' four variants with `threads` a block, and head dim 256, whose 200
// KiB ring of K/V tiles fits a Hopper SM's shared memory, with `wide_threads` (book:
// "Stage 14: flash decode", "Head dim 256").
#define FLASHLAB_EXPORT_ALL_DECODE(prefix, body, threads, wide_threads)                          \
    FLASHLAB_EXPORT_ALL_WITH(flashlab::DecodeParams, prefix, body, threads)                      \
    FLASHLAB_EXPORT_WITH(flashlab::DecodeParams, prefix, body, __nv_bfloat16, bf16, 256, wide_threads) \
    FLASHLAB_EXPORT_WITH(flashlab::DecodeParams, prefix, body, __half, f16, 256, wide_threads)
