// Stage 15 built with another cp.async ring depth (build.sh sets NSTAGES; the kernel is
// the committed one otherwise), run at each split count asked for: does a deeper ring,
// which leaves room for one block per SM instead of two, win where the grid is small?
// Timed as the trace instrument times (flushed_timer.h), the same-bytes read beside it;
// every run's O and LSE are checked against the same kernel at one split (NaN first).
// Usage: ring ROUNDS BATCH,CACHE_LEN,SPLITS[/SPLITS...]...
#include <cuda_bf16.h>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#define FLASHLAB_HOST_WARPS 4
#define FLASHLAB_HOST_ROWS 16
#define FLASHLAB_HOST_BLOCK_KV 64
#define FLASHLAB_HOST_WIDE_COL_SPLIT 2
#include "flash_decode_ring.cu"
#include "ceilings.cu"
#include "ck.h"
#include "decode_problem.h"
#include "flushed_timer.h"

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: ring ROUNDS BATCH,CACHE_LEN,SPLITS[/SPLITS...]...\n");
        return 2;
    }
    const int rounds = atoi(argv[1]);
    const int heads = 32, kv_heads = 8, d = 128, max_splits = 64;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int smem = (2 * flashlab::NSTAGES * 64 * d + 16 * d) * 2;
    CK(cudaFuncSetAttribute(flash_decode_split_bf16_d128, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flash_decode_split_bf16_d128, 128, smem));
    printf("NSTAGES %d: %d KiB of shared memory a block, %d blocks per SM, %s\n", flashlab::NSTAGES, smem / 1024, per_sm,
           prop.name);
    const FlushedTimer timer(prop);
    for (int a = 2; a < argc; ++a) {
        int batch, len;
        char rest[256];
        if (sscanf(argv[a], "%d,%d,%255s", &batch, &len, rest) != 3) return 2;
        std::vector<int> splits;
        std::string list(rest);
        for (auto& c : list) if (c == '/') c = ' ';
        std::istringstream in(list);
        for (int x; in >> x;) splits.push_back(x);
        flashlab::DecodeParams p = fast_random_problem(batch, len, heads, kv_heads, d, max_splits);
        const double bytes = static_cast<double>(batch) * len * kv_heads * d * 2 * 2;
        auto launch = [&](int s) { flash_decode_split_bf16_d128<<<dim3(s, 1, batch * kv_heads), 128, smem>>>(p); };
        set_splits(p, 1);
        launch(1);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        const DecodeOutputs ref = fetch_outputs(p);
        for (int r = 0; r < rounds; ++r) {
            const float t_read = timer.read_us(static_cast<size_t>(bytes));
            printf("nst %d batch %2d cache %6d  read    %8.2f us %6.0f GB/s  round %d\n", flashlab::NSTAGES, batch, len, t_read,
                   bytes / t_read / 1e3, r + 1);
            for (int s : splits) {
                set_splits(p, s);
                if (r == 0) {
                    poison_output(p);
                    launch(s);
                    CK(cudaGetLastError());
                    CK(cudaDeviceSynchronize());
                    print_difference("   ", s, fetch_outputs(p), ref);
                }
                const float t = timer.median_us([&] { launch(s); });
                CK(cudaGetLastError());
                printf("nst %d batch %2d cache %6d  x%-4d  %8.2f us %6.0f GB/s (%.1f%% of the read)  round %d\n", flashlab::NSTAGES,
                       batch, len, s, t, bytes / t / 1e3, 100.0 * t_read / t, r + 1);
            }
        }
        fflush(stdout);
        cudaFree(const_cast<void*>(p.attn.k));
        cudaFree(const_cast<void*>(p.attn.v));
    }
    return 0;
}
