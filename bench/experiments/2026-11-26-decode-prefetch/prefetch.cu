// Stage 15 with its next key tiles prefetched into the L2 (prefetch.patch): each block
// asks for the tiles up to PF past the newest in its cp.async ring, so that more of its
// bytes are on their way than its three ring slots hold. Timed as the trace instrument
// times (flushed_timer.h), PF = 0 (the committed kernel's work) beside each PF asked for,
// round after round, with the same-bytes read; every run's O and LSE are checked against
// the same kernel at one split (NaN first).
// Usage: prefetch "PF..." ROUNDS BATCH,CACHE_LEN,SPLITS...
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <vector>

#define FLASHLAB_HOST_WARPS 4
#define FLASHLAB_HOST_ROWS 16
#define FLASHLAB_HOST_BLOCK_KV 64
#define FLASHLAB_HOST_NSTAGES 3
#define FLASHLAB_HOST_WIDE_COL_SPLIT 2
#include "flash_decode_prefetch.cu"
#include "ceilings.cu"
#include "ck.h"
#include "decode_problem.h"
#include "flushed_timer.h"

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: prefetch \"PF...\" ROUNDS BATCH,CACHE_LEN,SPLITS...\n");
        return 2;
    }
    std::vector<int> pfs;
    std::istringstream in(argv[1]);
    for (int x; in >> x;) pfs.push_back(x);
    const int rounds = atoi(argv[2]);
    const int heads = 32, kv_heads = 8, d = 128, max_splits = 64;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int smem = (2 * 3 * 64 * d + 16 * d) * 2;
    CK(cudaFuncSetAttribute(flash_decode_split_bf16_d128, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const FlushedTimer timer(prop);
    for (int a = 3; a < argc; ++a) {
        int batch, len, splits;
        if (sscanf(argv[a], "%d,%d,%d", &batch, &len, &splits) != 3) return 2;
        flashlab::DecodeParams p = fast_random_problem(batch, len, heads, kv_heads, d, max_splits);
        const double bytes = static_cast<double>(batch) * len * kv_heads * d * 2 * 2;
        printf("shape batch %d cache %d splits %d (%.1f MB of K/V), %s\n", batch, len, splits, bytes / 1e6, prop.name);
        auto launch = [&](int s) { flash_decode_split_bf16_d128<<<dim3(s, 1, batch * kv_heads), 128, smem>>>(p); };
        int zero = 0;
        CK(cudaMemcpyToSymbol(flashlab::g_prefetch_tiles, &zero, sizeof zero));
        set_splits(p, 1);
        launch(1);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        const DecodeOutputs ref = fetch_outputs(p);
        set_splits(p, splits);
        for (int r = 0; r < rounds; ++r) {
            const float t_read = timer.read_us(static_cast<size_t>(bytes));
            printf("  round %d  read of the same bytes %8.2f us %6.0f GB/s\n", r + 1, t_read, bytes / t_read / 1e3);
            for (int pf : pfs) {
                CK(cudaMemcpyToSymbol(flashlab::g_prefetch_tiles, &pf, sizeof pf));
                char what[32];
                snprintf(what, sizeof what, "pf %d", pf);
                if (r == 0) {
                    poison_output(p);
                    launch(splits);
                    CK(cudaGetLastError());
                    CK(cudaDeviceSynchronize());
                    print_difference(what, splits, fetch_outputs(p), ref);
                }
                const float t = timer.median_us([&] { launch(splits); });
                CK(cudaGetLastError());
                printf("  round %d  %-6s %8.2f us %6.0f GB/s (%.1f%% of the read)\n", r + 1, what, t, bytes / t / 1e3,
                       100.0 * t_read / t);
            }
        }
        fflush(stdout);
        cudaFree(const_cast<void*>(p.attn.k));
        cudaFree(const_cast<void*>(p.attn.v));
    }
    return 0;
}
