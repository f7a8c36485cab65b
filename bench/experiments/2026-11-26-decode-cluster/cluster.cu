// Stage 15's merge in a cluster (the prototype: DSMEM; "stage 16" in the output) against
// stage 15 (the merge through the L2) and the same-bytes read, timed as the trace
// instrument times them: events around one launch, the L2 flushed before each, median of
// 180. Checks every run's O and LSE against stage 15 at one split (NaN first).
// Usage: cluster BATCH CACHE_LEN "S15 SPLITS..." "S16 SPLITS..."
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>
#include <flashlab/decode.cuh>
#include "ceilings.cu"

void launch15(const flashlab::DecodeParams& p, dim3 grid, int smem);
cudaError_t launch15_clustered(const flashlab::DecodeParams& p, dim3 grid, int smem, int cluster);
cudaError_t launch16(const flashlab::DecodeParams& p, dim3 grid, int smem);
int max_clusters16(int splits, int smem);

#include "ck.h"

static std::vector<int> ints(const char* s) {
    std::vector<int> v;
    std::istringstream in(s);
    for (int x; in >> x;) v.push_back(x);
    return v;
}

#include "decode_problem.h"
#include "flushed_timer.h"

int main(int argc, char** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: cluster BATCH CACHE_LEN \"S15 SPLITS\" \"S16 SPLITS\"\n");
        return 2;
    }
    const int batch = atoi(argv[1]), len = atoi(argv[2]);
    const std::vector<int> s15 = ints(argv[3]), s16 = ints(argv[4]);
    const int heads = 32, kv_heads = 8, d = 128, max_splits = 64;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    flashlab::DecodeParams p = random_decode_problem(batch, len, heads, kv_heads, d, max_splits);
    const int smem = (2 * 3 * 64 * d + 16 * d) * 2;
    const double bytes = static_cast<double>(batch) * len * kv_heads * d * 2 * 2;
    const FlushedTimer timer(prop);
    auto median = [&](auto launch) { return timer.median_us(launch); };
    printf("shape batch %d cache %d (%.1f MB of K/V), %s, %d SMs\n", batch, len, bytes / 1e6, prop.name,
           prop.multiProcessorCount);

    // Stage 15 at one split: the values every other run is checked against.
    set_splits(p, 1);
    launch15(p, dim3(1, 1, batch * kv_heads), smem);
    CK(cudaDeviceSynchronize());
    const DecodeOutputs ref = fetch_outputs(p);
    const float t_read = timer.read_us(static_cast<size_t>(bytes));
    const float t_empty = median([&] {});
    printf("  read of the same bytes %8.2f us %6.0f GB/s; empty event pair %.2f us\n", t_read, bytes / t_read / 1e3, t_empty);
    // Checks one launch of `launch` (NaN first), then times it.
    auto measure = [&](const char* what, int splits, auto launch) {
        set_splits(p, splits);
        poison_output(p);
        CK(launch());
        CK(cudaDeviceSynchronize());
        print_difference(what, splits, fetch_outputs(p), ref);
        const float t = median([&] { launch(); });
        CK(cudaGetLastError());
        printf("  %s x%-2d %8.2f us %6.0f GB/s (%.0f%% of the same-bytes read)\n", what, splits, t, bytes / t / 1e3,
               100.0 * t_read / t);
    };
    for (int splits : s15)
        measure("stage 15", splits, [&] {
            launch15(p, dim3(splits, 1, batch * kv_heads), smem);
            return cudaGetLastError();
        });
    for (int splits : s15) {
        set_splits(p, splits);
        for (int cl = 2; cl <= 16 && cl <= splits; cl *= 2) {
            if (splits % cl) continue;
            poison_output(p);
            CK(launch15_clustered(p, dim3(splits, 1, batch * kv_heads), smem, cl));
            CK(cudaDeviceSynchronize());
            const float t = median([&] { launch15_clustered(p, dim3(splits, 1, batch * kv_heads), smem, cl); });
            CK(cudaGetLastError());
            printf("  stage 15 x%-2d in clusters of %2d %8.2f us %6.0f GB/s\n", splits, cl, t, bytes / t / 1e3);
        }
    }
    for (int splits : s16) {
        printf("  stage 16 x%-2d: at most %d clusters at once\n", splits, max_clusters16(splits, smem));
        measure("stage 16", splits, [&] { return launch16(p, dim3(splits, 1, batch * kv_heads), smem); });
    }
    return 0;
}
