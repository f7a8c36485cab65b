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
    const size_t kv_elems = static_cast<size_t>(batch) * len * kv_heads * d, q_elems = static_cast<size_t>(batch) * heads * d;
    std::vector<__nv_bfloat16> h_k(kv_elems), h_v(kv_elems), h_q(q_elems);
    srand(1);
    for (auto& x : h_k) x = __float2bfloat16(0.2f + (rand() % 1000) / 1000.f);
    for (auto& x : h_v) x = __float2bfloat16(0.5f + (rand() % 1000) / 500.f);
    for (auto& x : h_q) x = __float2bfloat16(0.3f + (rand() % 1000) / 1000.f);
    flashlab::DecodeParams p = upload_decode_problem(batch, len, heads, kv_heads, d, max_splits, h_q, h_k, h_v);
    const int smem = (2 * 3 * 64 * d + 16 * d) * 2, key_tiles = (len + 63) / 64;
    const FlushedTimer timer(prop);
    const long long kv_chunks = kv_elems * 2 * 2 / 16;
    int4* kv_copy;
    CK(cudaMalloc(&kv_copy, kv_chunks * 16));
    CK(cudaMemset(kv_copy, 1, kv_chunks * 16));
    const double bytes = kv_elems * 2.0 * 2.0;
    auto set_splits = [&](int splits) {
        p.num_splits = splits;
        p.tiles_per_split = (key_tiles + splits - 1) / splits;
    };
    auto fetch = [&](std::vector<float>& o, std::vector<float>& lse) {
        std::vector<__nv_bfloat16> ho(q_elems);
        CK(cudaMemcpy(ho.data(), p.attn.o, q_elems * 2, cudaMemcpyDeviceToHost));
        o.resize(q_elems);
        for (size_t i = 0; i < q_elems; ++i) o[i] = __bfloat162float(ho[i]);
        lse.resize(batch * heads);
        CK(cudaMemcpy(lse.data(), p.attn.lse, batch * heads * 4, cudaMemcpyDeviceToHost));
    };
    printf("shape batch %d cache %d D256 (%.1f MB of K/V), %s\n", batch, len, bytes / 1e6, prop.name);
    std::vector<float> ref_o, ref_lse;
    set_splits(1);
    launch_base(p, dim3(1, 1, batch * kv_heads), smem);
    CK(cudaDeviceSynchronize());
    fetch(ref_o, ref_lse);
    const float t_read = timer.median_us([&] { timer.read(kv_copy, kv_chunks); });
    printf("  read of the same bytes %8.2f us %6.0f GB/s\n", t_read, bytes / t_read / 1e3);
    auto measure = [&](const char* what, int splits, auto launch) {
        set_splits(splits);
        CK(cudaMemset(p.attn.o, 0xff, q_elems * 2));
        launch();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<float> o, lse;
        fetch(o, lse);
        double err_o = 0, err_lse = 0;
        size_t bad = 0;
        for (size_t i = 0; i < q_elems; ++i) {
            if (!std::isfinite(o[i])) ++bad;
            err_o = std::max(err_o, static_cast<double>(fabsf(o[i] - ref_o[i])));
        }
        for (int i = 0; i < batch * heads; ++i) err_lse = std::max(err_lse, static_cast<double>(fabsf(lse[i] - ref_lse[i])));
        const float t = timer.median_us(launch);
        CK(cudaGetLastError());
        printf("  %-9s x%-2d %8.2f us %6.0f GB/s (%.0f%% of the read); max |O - O_1split| %.4g, |LSE| %.3g, non-finite %zu\n",
               what, splits, t, bytes / t / 1e3, 100.0 * t_read / t, err_o, err_lse, bad);
    };
    for (int splits : split_counts) {
        const dim3 grid(splits, 1, batch * kv_heads);
        measure("stage 15", splits, [&] { launch_base(p, grid, smem); });
        measure("colsplit", splits, [&] { launch_colsplit(p, grid, smem); });
    }
    return 0;
}
