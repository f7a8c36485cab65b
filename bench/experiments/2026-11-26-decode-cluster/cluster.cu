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
    const size_t kv_elems = static_cast<size_t>(batch) * len * kv_heads * d, q_elems = static_cast<size_t>(batch) * heads * d;
    std::vector<__nv_bfloat16> h_k(kv_elems), h_v(kv_elems), h_q(q_elems);
    srand(1);
    for (auto& x : h_k) x = __float2bfloat16(0.2f + (rand() % 1000) / 1000.f);
    for (auto& x : h_v) x = __float2bfloat16(0.5f + (rand() % 1000) / 500.f);
    for (auto& x : h_q) x = __float2bfloat16(0.3f + (rand() % 1000) / 1000.f);
    flashlab::DecodeParams p = upload_decode_problem(batch, len, heads, kv_heads, d, max_splits, h_q, h_k, h_v);
    auto* o = static_cast<__nv_bfloat16*>(p.attn.o);
    float* lse = p.attn.lse;
    const int smem = (2 * 3 * 64 * d + 16 * d) * 2;
    const int key_tiles = (len + 63) / 64;

    // The flush, the clock and the streaming read: flushed_timer.h.
    const FlushedTimer timer(prop);
    const long long kv_chunks = kv_elems * 2 * 2 / 16;
    int4* kv_copy;
    CK(cudaMalloc(&kv_copy, kv_chunks * 16));
    CK(cudaMemset(kv_copy, 1, kv_chunks * 16));
    auto median = [&](auto launch) { return timer.median_us(launch); };
    const double bytes = kv_elems * 2.0 * 2.0;
    auto set_splits = [&](int splits) {
        p.num_splits = splits;
        p.tiles_per_split = (key_tiles + splits - 1) / splits;
    };
    auto fetch = [&](std::vector<float>& out_o, std::vector<float>& out_lse) {
        std::vector<__nv_bfloat16> ho(q_elems);
        CK(cudaMemcpy(ho.data(), o, q_elems * 2, cudaMemcpyDeviceToHost));
        out_o.resize(q_elems);
        for (size_t i = 0; i < q_elems; ++i) out_o[i] = __bfloat162float(ho[i]);
        out_lse.resize(batch * heads);
        CK(cudaMemcpy(out_lse.data(), lse, batch * heads * 4, cudaMemcpyDeviceToHost));
    };
    printf("shape batch %d cache %d (%.1f MB of K/V), %s, %d SMs\n", batch, len, bytes / 1e6, prop.name,
           prop.multiProcessorCount);

    // Stage 15 at one split: the values every other run is checked against.
    std::vector<float> ref_o, ref_lse;
    set_splits(1);
    launch15(p, dim3(1, 1, batch * kv_heads), smem);
    CK(cudaDeviceSynchronize());
    fetch(ref_o, ref_lse);
    const float t_read = median([&] { timer.read(kv_copy, kv_chunks); });
    const float t_empty = median([&] {});
    printf("  read of the same bytes %8.2f us %6.0f GB/s; empty event pair %.2f us\n", t_read, bytes / t_read / 1e3, t_empty);
    auto check = [&](const char* what, int splits) {
        std::vector<float> got_o, got_lse;
        fetch(got_o, got_lse);
        double err_o = 0, err_lse = 0;
        size_t bad = 0;
        for (size_t i = 0; i < q_elems; ++i) {
            if (!std::isfinite(got_o[i])) ++bad;
            err_o = std::max(err_o, static_cast<double>(fabsf(got_o[i] - ref_o[i])));
        }
        for (int i = 0; i < batch * heads; ++i) err_lse = std::max(err_lse, static_cast<double>(fabsf(got_lse[i] - ref_lse[i])));
        printf("    %s x%d: max |O - O_1split| %.4g, max |LSE - LSE_1split| %.4g, non-finite %zu\n", what, splits, err_o,
               err_lse, bad);
    };
    // Checks one launch of `launch` (NaN first), then times it.
    auto measure = [&](const char* what, int splits, auto launch) {
        set_splits(splits);
        CK(cudaMemset(o, 0xff, q_elems * 2));
        CK(launch());
        CK(cudaDeviceSynchronize());
        check(what, splits);
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
        set_splits(splits);
        for (int cl = 2; cl <= 16 && cl <= splits; cl *= 2) {
            if (splits % cl) continue;
            CK(cudaMemset(o, 0xff, q_elems * 2));
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
