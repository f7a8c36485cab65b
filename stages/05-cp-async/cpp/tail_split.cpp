// Host build of tail_split.cuh (stages/05-cp-async/build.rs), so the CPU tests check the
// partition the kernels use: each function is the header's, behind a C name.
#include <flashlab/tail_split.cuh>

extern "C" {
void flashlab_split_run(int tiles, int kv_tiles, int blocks, int j, long long* begin, long long* end) {
    const flashlab::SplitRun r = flashlab::split_run(tiles, kv_tiles, blocks, j);
    *begin = r.begin;
    *end = r.end;
}
int flashlab_split_block_of(int tiles, int kv_tiles, int blocks, long long i) {
    return flashlab::split_block_of(tiles, kv_tiles, blocks, i);
}
void flashlab_split_part(int tiles, int kv_tiles, int blocks, int j, int part, int* tile, int* kv_first, int* kv_limit) {
    const flashlab::SplitPart s = flashlab::split_part(tiles, kv_tiles, blocks, j, part);
    *tile = s.tile;
    *kv_first = s.kv_first;
    *kv_limit = s.kv_limit;
}
int flashlab_split_part_in(int tiles, int kv_tiles, int blocks, int j, int tile) {
    return flashlab::split_part_in(tiles, kv_tiles, blocks, j, tile);
}
}
