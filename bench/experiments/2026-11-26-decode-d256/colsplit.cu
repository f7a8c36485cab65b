// Stage 15 at head dim 256 against colsplit.patch's variant, and the same-bytes read, timed
// as the trace instrument times them (flushed_timer.h). Every run's O and LSE are checked
// against the committed kernel at one split (NaN first).
// Usage: colsplit BATCH CACHE_LEN "SPLITS..."
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>
#include <flashlab/decode.cuh>
#include "ceilings.cu"
#include "ck.h"
#include "decode_problem.h"
#include "flushed_timer.h"

void launch_base(const flashlab::DecodeParams& p, dim3 grid, int smem);
void launch_colsplit(const flashlab::DecodeParams& p, dim3 grid, int smem);

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: colsplit BATCH CACHE_LEN \"SPLITS...\"\n");
        return 2;
    }
    const int batch = atoi(argv[1]), len = atoi(argv[2]);
    std::vector<int> split_counts;
    std::istringstream in(argv[3]);
    for (int x; in >> x;) split_counts.push_back(x);
    const int heads = 32, kv_heads = 8, d = 256, max_splits = 64;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    flashlab::DecodeParams p = random_decode_problem(batch, len, heads, kv_heads, d, max_splits);
    const int smem = (2 * 3 * 64 * d + 16 * d) * 2;
    const double bytes = static_cast<double>(batch) * len * kv_heads * d * 2 * 2;
    const FlushedTimer timer(prop);
    printf("shape batch %d cache %d D256 (%.1f MB of K/V), %s\n", batch, len, bytes / 1e6, prop.name);
    set_splits(p, 1);
    launch_base(p, dim3(1, 1, batch * kv_heads), smem);
    CK(cudaDeviceSynchronize());
    const DecodeOutputs ref = fetch_outputs(p);
    const float t_read = timer.read_us(static_cast<size_t>(bytes));
    printf("  read of the same bytes %8.2f us %6.0f GB/s\n", t_read, bytes / t_read / 1e3);
    auto measure = [&](const char* what, int splits, auto launch) {
        set_splits(p, splits);
        poison_output(p);
        launch();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        print_difference(what, splits, fetch_outputs(p), ref);
        const float t = timer.median_us(launch);
        CK(cudaGetLastError());
        printf("  %-9s x%-2d %8.2f us %6.0f GB/s (%.0f%% of the read)\n", what, splits, t, bytes / t / 1e3, 100.0 * t_read / t);
    };
    for (int splits : split_counts) {
        const dim3 grid(splits, 1, batch * kv_heads);
        measure("stage 15", splits, [&] { launch_base(p, grid, smem); });
        measure("colsplit", splits, [&] { launch_colsplit(p, grid, smem); });
    }
    return 0;
}
