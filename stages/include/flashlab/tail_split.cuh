// tail_split.cuh: how stage 5's tail split cuts the last query tiles' keys between blocks
// (book: stage 5, step 13). The split tiles' key tiles are laid end to end, tile after
// tile, and cut into `blocks` runs of equal length (to within one). Pure integer functions,
// compiled for the host too (stage 5's build.rs), so the CPU tests check the very partition
// the kernels use.
#pragma once
#include "hostdev.cuh"

namespace flashlab {

// Iterations [begin, end) of the split tiles' `tiles * kv_tiles` key tiles.
struct SplitRun {
    long long begin, end;
};

// The run of block j (0 <= j < blocks).
FL_HOST_DEVICE SplitRun split_run(int tiles, int kv_tiles, int blocks, int j) {
    const long long total = static_cast<long long>(tiles) * kv_tiles;
    return {j * total / blocks, (j + 1) * total / blocks};
}

// The block whose run holds iteration i: the largest j with j * total / blocks <= i,
// i.e. j * total < (i + 1) * blocks.
FL_HOST_DEVICE int split_block_of(int tiles, int kv_tiles, int blocks, long long i) {
    const long long total = static_cast<long long>(tiles) * kv_tiles;
    return static_cast<int>(((i + 1) * blocks - 1) / total);
}

// Part `part` of block j's run: split tile `tile`, key tiles kv_first .. kv_limit - 1 of it.
// Part 0 is in the tile where the run starts, part 1 in the next; with more blocks than
// tiles a run is shorter than a tile, so there is no part 2, and a part past the run's end
// is empty (kv_first >= kv_limit).
struct SplitPart {
    int tile, kv_first, kv_limit;
};
FL_HOST_DEVICE SplitPart split_part(int tiles, int kv_tiles, int blocks, int j, int part) {
    const SplitRun r = split_run(tiles, kv_tiles, blocks, j);
    const long long first = part == 0 ? r.begin : (r.begin / kv_tiles + part) * kv_tiles;
    const int tile = static_cast<int>(first / kv_tiles);
    const long long tile_begin = static_cast<long long>(tile) * kv_tiles;
    const long long limit = r.end - tile_begin < kv_tiles ? r.end - tile_begin : kv_tiles;
    return {tile, static_cast<int>(first - tile_begin), static_cast<int>(limit > 0 ? limit : 0)};
}

// Which part of block j lies in split tile `tile`: 0 if j's run starts in it, 1 if it
// started in the tile before.
FL_HOST_DEVICE int split_part_in(int tiles, int kv_tiles, int blocks, int j, int tile) {
    return split_run(tiles, kv_tiles, blocks, j).begin < static_cast<long long>(tile) * kv_tiles ? 1 : 0;
}

}  // namespace flashlab
