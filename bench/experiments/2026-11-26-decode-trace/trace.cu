// Where a decode step's time goes: stage 15's kernel with a timestamp (%globaltimer, ns)
// taken by thread 0 of every block at eight points (trace.patch), run on one shape with
// the L2 flushed before each launch, as flashlab's decode runs do. Beside it, the same
// bytes read by a kernel that only reads (the bench's read floor).
//
//   8 kernel entry (session 17)   0 this split's tiles known   1 first tile landed   2 key loop done   3 partial O/LSE written
//   4 counted on the tile's counter   5 merge done (the last split of a row tile only)
//   6 the merging split past its count (past the fence after it, in the kernels that had one)
//   7 its first chunk of partials in shared memory
//
// Since session 17 it prints two traces: that of the last of the timed launches (each after
// a flush and the first event, as the bench times them), and that of one launch traced
// alone after a flush and a copy of zeros into the trace buffer, the only trace before.
// The two differ: see results.txt, session 17.
// `trace BATCH CACHE_LEN SPLITS warm` runs every measurement twice: as above (cold), and
// with a small launch of the same kernel (batch 1, 1024 keys, 16 splits, so its last
// splits merge) queued after each flush and before the first event, which leaves the
// kernel's code in the L2 while the big launch's K/V stay cold: is the code's fetch from
// memory part of the time after the loop? FLASHLAB_PRE_READ_KIB and
// FLASHLAB_FLUSH_CARVEOUT (flushed_timer.h) vary what comes between the flush and the
// launch. FLASHLAB_TRACE_DUMP writes every block's loop of 20 launches to a file.
//
// Built by build.sh from the committed kernel plus trace.patch; a lab instrument, not a
// stage: the numbers it printed are in results.txt.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define FLASHLAB_HOST_WARPS 4
#define FLASHLAB_HOST_ROWS 16
#define FLASHLAB_HOST_BLOCK_KV 64
#define FLASHLAB_HOST_NSTAGES 3
#define FLASHLAB_HOST_WIDE_COL_SPLIT 2

__device__ unsigned long long g_trace[1 << 16][16];
__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned smid() {
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
#define TRACE(i)                                                                                               \
    do {                                                                                                       \
        if (threadIdx.x == 0) {                                                                                \
            const int blk = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;                    \
            g_trace[blk][i] = globaltimer();                                                                   \
            if (i == 0) g_trace[blk][15] = smid();                                                              \
        }                                                                                                      \
    } while (0)

#include "flash_decode_fused_traced.cu"

// The read of the same bytes and the flush: flashlab's own streaming read.
#include "ceilings.cu"

#include "ck.h"

#include "decode_problem.h"
#include "flushed_timer.h"

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: trace BATCH CACHE_LEN SPLITS [warm]\n");
        return 2;
    }
    const bool with_warm = argc > 4 && !strcmp(argv[4], "warm");
    const int batch = atoi(argv[1]), len = atoi(argv[2]), splits = atoi(argv[3]);
    const int heads = 32, kv_heads = 8, d = 128;
    const int key_tiles = (len + 63) / 64, tiles_per_split = (key_tiles + splits - 1) / splits;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const size_t kv_elems = static_cast<size_t>(batch) * len * kv_heads * d;
    std::vector<__nv_bfloat16> h_kv(kv_elems), h_q(static_cast<size_t>(batch) * heads * d);
    srand(1);
    for (auto& x : h_kv) x = __float2bfloat16(0.5f + (rand() % 1000) / 1000.f);
    for (auto& x : h_q) x = __float2bfloat16(0.3f + (rand() % 1000) / 1000.f);
    flashlab::DecodeParams p = upload_decode_problem(batch, len, heads, kv_heads, d, splits, h_q, h_kv, h_kv);
    p.num_splits = splits, p.tiles_per_split = tiles_per_split;
    const int smem = (2 * 3 * 64 * d + 16 * d) * 2;
    CK(cudaFuncSetAttribute(flash_decode_split_bf16_d128, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const dim3 grid(splits, 1, batch * kv_heads);

    // The flush, the clock and the streaming read: flushed_timer.h.
    const FlushedTimer timer(prop);
    const long long kv_chunks = kv_elems * 2 * 2 / 16;
    int4* kv_copy;
    CK(cudaMalloc(&kv_copy, kv_chunks * 16));
    CK(cudaMemset(kv_copy, 1, kv_chunks * 16));
    auto flush = [&] { timer.flush(); };
    // The warm-code launch: its own small problem, its last splits merge.
    flashlab::DecodeParams small = random_decode_problem(1, 1024, heads, kv_heads, d, 16);
    set_splits(small, 16);
    auto warm_code = [&] { flash_decode_split_bf16_d128<<<dim3(16, 1, kv_heads), 128, smem>>>(small); };
    // FLASHLAB_PRE_READ_KIB: a read of that many KiB queued last before the first event in
    // both modes, so that the kernel before the timed one is the same in both.
    const char* pre_env = getenv("FLASHLAB_PRE_READ_KIB");
    const long long pre_chunks = pre_env ? atoll(pre_env) * 1024 / 16 : 0;
    int4* pre_buf = nullptr;
    if (pre_chunks) {
        CK(cudaMalloc(&pre_buf, pre_chunks * 16));
        CK(cudaMemset(pre_buf, 1, pre_chunks * 16));
    }
    const double bytes = kv_elems * 2.0 * 2.0;
    const int blocks = grid.x * grid.z;
    const std::vector<unsigned long long> zero(static_cast<size_t>(blocks) * 16, 0);
    for (int warm = 0; warm <= (with_warm ? 1 : 0); ++warm) {
    auto before = [&] {
        if (warm) warm_code();
        if (pre_chunks) timer.read(pre_buf, pre_chunks);
    };
    auto median = [&](auto launch) { return timer.median_us(launch, before); };
    CK(cudaMemcpyToSymbol(g_trace, zero.data(), zero.size() * sizeof(unsigned long long)));
    const float t_kernel = median([&] { flash_decode_split_bf16_d128<<<grid, 128, smem>>>(p); });
    CK(cudaGetLastError());
    printf("shape batch %d cache %d splits %d (%d tiles each), %d blocks, %s%s\n", batch, len, splits, tiles_per_split,
           grid.x * grid.z, prop.name, warm ? ", CODE WARMED by a small launch after each flush" : "");
    printf("events (us, median of 180, L2 flushed): stage 15 %.2f (%.0f GB/s)\n", t_kernel, bytes / t_kernel / 1e3);

    // The trace of the last launch that wrote g_trace, per block relative to the first
    // entry. A point a block wrote in an earlier launch (a split that merged then and not
    // in the last one) is older than its entry, and is left out.
    auto report = [&](const char* title) {
    std::vector<unsigned long long> tr(static_cast<size_t>(blocks) * 16);
    CK(cudaMemcpyFromSymbol(tr.data(), g_trace, tr.size() * sizeof(unsigned long long)));
    for (int i = 0; i < blocks; ++i)
        for (int e = 1; e < 8; ++e)
            if (tr[i * 16 + e] < tr[i * 16 + 0]) tr[i * 16 + e] = 0;
    unsigned long long first_in = ~0ull, first_0 = ~0ull;
    for (int i = 0; i < blocks; ++i)
        if (tr[i * 16 + 8]) first_in = std::min(first_in, tr[i * 16 + 8]), first_0 = std::min(first_0, tr[i * 16 + 0]);
    if (first_in != ~0ull) printf("first kernel entry %.2f us before the first point 0\n", (first_0 - first_in) / 1000.0);
    printf("%s\n", title);
    unsigned long long t0 = ~0ull, t_end = 0;
    for (int i = 0; i < blocks; ++i) {
        t0 = std::min(t0, tr[i * 16 + 0]);
        for (int e = 0; e < 8; ++e) t_end = std::max(t_end, tr[i * 16 + e]);  // one split stops at point 3
    }
    auto us = [&](int i, int e) { return tr[i * 16 + e] ? (tr[i * 16 + e] - t0) / 1000.0 : -1.0; };
    auto stats = [&](const char* what, auto f) {
        std::vector<double> x;
        for (int i = 0; i < blocks; ++i) {
            const double y = f(i);
            if (y >= 0) x.push_back(y);
        }
        if (x.empty()) return;
        std::sort(x.begin(), x.end());
        printf("  %-34s min %7.2f  median %7.2f  max %7.2f  (n=%zu)\n", what, x.front(), x[x.size() / 2], x.back(),
               x.size());
    };
    printf("traced launch: first entry to last block done %.2f us\n", (t_end - t0) / 1000.0);
    stats("kernel entry to point 0 (session 17)",
          [&](int i) { return tr[i * 16 + 8] ? (tr[i * 16 + 0] - tr[i * 16 + 8]) / 1000.0 : -1.0; });
    stats("entry (us after the first)", [&](int i) { return us(i, 0); });
    stats("first tile landed, after entry", [&](int i) { return us(i, 1) - us(i, 0); });
    stats("key loop, first tile to done", [&](int i) { return us(i, 2) - us(i, 1); });
    stats("key loop done (absolute)", [&](int i) { return us(i, 2); });
    stats("warp merge + partial write", [&](int i) { return us(i, 3) - us(i, 2); });
    stats("fence + count", [&](int i) { return us(i, 4) - us(i, 3); });
    stats("counted (absolute)", [&](int i) { return us(i, 4); });
    stats("merge (last splits)", [&](int i) { return tr[i * 16 + 5] ? us(i, 5) - us(i, 4) : -1.0; });
    stats("  of which to know it is the last", [&](int i) { return tr[i * 16 + 6] ? us(i, 6) - us(i, 4) : -1.0; });
    stats("  then the copies landed", [&](int i) { return tr[i * 16 + 7] ? us(i, 7) - us(i, 6) : -1.0; });
    stats("  then the merge of a chunk on", [&](int i) { return tr[i * 16 + 7] ? us(i, 5) - us(i, 7) : -1.0; });
    stats("merge done (absolute)", [&](int i) { return tr[i * 16 + 5] ? us(i, 5) : -1.0; });
    std::vector<int> per_sm(prop.multiProcessorCount, 0);
    for (int i = 0; i < blocks; ++i) per_sm[tr[i * 16 + 15]]++;
    int sm_max = *std::max_element(per_sm.begin(), per_sm.end()), sm_zero = std::count(per_sm.begin(), per_sm.end(), 0);
    printf("  blocks per SM: at most %d, %d SMs without a block\n", sm_max, sm_zero);
    };
    report("trace of the last timed launch (flush, first event, launch):");
    // FLASHLAB_TRACE_DUMP=FILE: 20 more launches as the timed ones, each block's points
    // (us after the launch's first point 0) and SM appended to FILE as CSV: is a slow
    // block's SM slow in every launch (session 17)?
    if (const char* dump = getenv("FLASHLAB_TRACE_DUMP")) {
        FILE* f = fopen(dump, "a");
        if (!f) { perror(dump); exit(2); }
        std::vector<unsigned long long> tr(static_cast<size_t>(blocks) * 16);
        for (int launch = 0; launch < 20; ++launch) {
            flush();
            before();
            CK(cudaEventRecord(timer.a));
            flash_decode_split_bf16_d128<<<grid, 128, smem>>>(p);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpyFromSymbol(tr.data(), g_trace, tr.size() * sizeof(unsigned long long)));
            unsigned long long t0 = ~0ull;
            for (int i = 0; i < blocks; ++i) t0 = std::min(t0, tr[i * 16 + 0]);
            for (int i = 0; i < blocks; ++i) {
                auto at = [&](int e) { return (static_cast<double>(tr[i * 16 + e]) - static_cast<double>(t0)) / 1000.0; };
                fprintf(f, "%d,%d,%d,%d,%llu,%.3f,%.3f,%.3f\n", batch, len, launch, i, tr[i * 16 + 15], at(0), at(1), at(2));
            }
        }
        fclose(f);
    }
    const float t_read = median([&] { timer.read(kv_copy, kv_chunks); });
    const float t_empty = median([&] {});
    printf("events (us, median of 180, L2 flushed): read of the same bytes %.2f (%.0f GB/s), nothing %.2f\n", t_read,
           bytes / t_read / 1e3, t_empty);
    // One traced launch (after a flush), as before session 17.
    flush();
    before();  // its blocks write trace points too: the zeroing comes after it
    CK(cudaMemcpyToSymbolAsync(g_trace, zero.data(), zero.size() * sizeof(unsigned long long)));
    flash_decode_split_bf16_d128<<<grid, 128, smem>>>(p);
    CK(cudaDeviceSynchronize());
    report("one traced launch (flush, copy of zeros into the trace, launch):");
    }
    return 0;
}
