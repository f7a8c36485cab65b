//! kernel_fns.cpp: the host build of what the kernels share with protocol-viz's models,
//! as `extern "C"` wrappers with plain ints: the decode kernels' index functions
//! (kernel-headers/include/flashlab/decode_index.cuh) and the turns' named barriers and
//! counts (hopper/turns.cuh). A model or figure then runs the kernels' code and numbers,
//! not a copy of them. Adding one is a line here and a line in src/kernel_fns.rs.
#include "flashlab/decode_index.cuh"
#include "flashlab/hopper/turns.cuh"

extern "C" {

// decode_index.cuh (stage 14): a split's key tiles, a key's cache row, a packed row's
// (token, head).
void fl_split_tiles(int split, int tiles_per_split, int seqlen_k, int block_kv, int* begin, int* count) {
    const flashlab::SplitTiles t = flashlab::split_tiles(split, tiles_per_split, seqlen_k, block_kv);
    *begin = t.begin;
    *count = t.count;
}
long long fl_cache_row(const int* block_table, int pages_per_seq, int page_size, int page_shift, int capacity, int b,
                       int j) {
    return flashlab::cache_row(block_table, pages_per_seq, page_size, page_shift, capacity, b, j);
}
void fl_unpack_row(int group, int kv_head, int r, int* token, int* head) {
    const flashlab::PackedRow pr = flashlab::unpack_row(group, kv_head, r);
    *token = pr.token;
    *head = pr.head;
}


// hopper/turns.cuh (stage 13 on): the named barriers and what a turn counts.
int fl_consumers_wrote_o(void) { return flashlab::CONSUMERS_WROTE_O; }
int fl_mma_turn(void) { return flashlab::MMA_TURN; }
int fl_warpgroup_threads(void) { return flashlab::WARPGROUP_THREADS; }
int fl_turn_threads(void) { return flashlab::TURN_THREADS; }

}  // extern "C"
