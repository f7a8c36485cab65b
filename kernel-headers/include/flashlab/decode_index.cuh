// decode_index.cuh: the decode kernels' index arithmetic (stage 14 on) with plain
// arguments and no CUDA header, so that protocol-viz compiles the very same functions for
// the host and draws the book's decode figures with them. decode.cuh wraps them for the
// kernels' DecodeParams. Book: "Stage 14: flash decode".
#pragma once
#include "hostdev.cuh"

namespace flashlab {

// ANCHOR: split_tiles
// The key tiles (of block_kv keys) that split `split` of a sequence of seqlen_k keys
// covers: [begin, begin + count). Every split takes tiles_per_split tiles in order, so a
// short sequence's last splits get fewer or none (count 0), as the kernel's grid has the
// same number of splits for every sequence of the batch.
struct SplitTiles {
    int begin, count;
};
FL_HOST_DEVICE SplitTiles split_tiles(int split, int tiles_per_split, int seqlen_k, int block_kv) {
    const int begin = split * tiles_per_split;
    const int key_tiles = (seqlen_k + block_kv - 1) / block_kv;
    const int end = begin + tiles_per_split < key_tiles ? begin + tiles_per_split : key_tiles;
    return {begin, end > begin ? end - begin : 0};
}
// ANCHOR_END: split_tiles

// ANCHOR: cache_row
// The cache row (of kv_heads * head_dim elements) holding key j of sequence b.
// Contiguous (block_table null): row j of the sequence's own `capacity` rows. Paged: row
// j % page_size of the page the block table names for j / page_size, both by shift and
// mask, since pages are powers of two (page_shift = log2(page_size)).
FL_HOST_DEVICE long long cache_row(const int* block_table, int pages_per_seq, int page_size, int page_shift,
                                   int capacity, int b, int j) {
    if (block_table == nullptr) return static_cast<long long>(b) * capacity + j;
    const int page = block_table[static_cast<long long>(b) * pages_per_seq + (j >> page_shift)];
    return static_cast<long long>(page) * page_size + (j & (page_size - 1));
}
// ANCHOR_END: cache_row

// ANCHOR: unpack_row
// GQA packing: packed row r of K/V head kv_head is query token r / group of query head
// kv_head * group + r % group, so a tile's rows are every head of the group that reads
// this K/V head, token by token.
struct PackedRow {
    int token, head;
};
FL_HOST_DEVICE PackedRow unpack_row(int group, int kv_head, int r) { return {r / group, kv_head * group + r % group}; }
// ANCHOR_END: unpack_row

}  // namespace flashlab
