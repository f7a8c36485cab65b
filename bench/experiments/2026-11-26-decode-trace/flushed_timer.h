// The decode experiments' clock (trace.cu here, ../2026-11-26-decode-cluster/cluster.cu and
// the others that include it): one launch between two events, the L2 flushed before each
// by a read of twice its size (see flush() for which read), the median of 180 after 20
// more. Include ceilings.cu first.
#pragma once
#include "ck.h"
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

// The flush's read with plain loads (L2 evict-normal), as harness/kernels/ceilings.cu's
// l2_flush_read: ceiling_read's __ldcs allocates its lines evict-first, and a flush of
// evict-first lines left the last launch's evict-normal lines in the L2
// (../2026-11-26-decode-flush).
__global__ void __launch_bounds__(512) flush_read_normal(const int4* __restrict__ src, long long chunks, int* sink) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    int acc = 0;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < chunks; i += stride) {
        const int4 v = src[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678) sink[0] = acc;
}

struct FlushedTimer {
    long long flush_chunks;
    int read_blocks;
    int4* flush_buf;
    int* sink;
    cudaEvent_t a, b;

    explicit FlushedTimer(const cudaDeviceProp& prop)
        : flush_chunks(2ll * prop.l2CacheSize / 16), read_blocks(4 * prop.multiProcessorCount) {
        CK(cudaMalloc(&flush_buf, flush_chunks * 16));
        CK(cudaMemset(flush_buf, 0, flush_chunks * 16));
        CK(cudaMalloc(&sink, 4));
        // FLASHLAB_FLUSH_CARVEOUT=N (percent of the SM's L1 as shared memory, -1 the
        // default): the flush kernel's carveout preference, which the SM may have to change
        // back before a kernel that needs shared memory (session 17).
        if (const char* c = getenv("FLASHLAB_FLUSH_CARVEOUT"))
            CK(cudaFuncSetAttribute(flush_read_normal, cudaFuncAttributePreferredSharedMemoryCarveout, atoi(c)));
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    // Queues flashlab's streaming read of `chunks` 16-byte chunks of `src`: since session
    // 18 ceiling_read reads one slab of READ_THREADS x READ_LOADS chunks a block (its own
    // constants, ceilings.cu), as harness/src/sol.rs launches it; the results of the
    // experiments before were timed with its grid-stride form (../2026-11-26-read-floor's
    // grid_stride_read, 2-4% slower from 33.5 MB up).
    void read(const int4* src, long long chunks) const {
        constexpr long long SLAB = static_cast<long long>(READ_THREADS) * READ_LOADS;
        ceiling_read<<<static_cast<unsigned>((chunks + SLAB - 1) / SLAB), READ_THREADS>>>(src, chunks, sink);
    }
    // FLASHLAB_FLUSH: normal (the default since session 15: plain loads, as the harness's
    // l2_flush_read), ldcs (ceiling_read's evict-first loads, the flush of every result
    // here before ../2026-11-26-decode-flush) or memset (writes: dirty lines).
    void flush() const {
        static const char* mode = getenv("FLASHLAB_FLUSH");
        if (mode && !strcmp(mode, "ldcs"))
            read(flush_buf, flush_chunks);
        else if (mode && !strcmp(mode, "memset"))
            CK(cudaMemsetAsync(flush_buf, 0, flush_chunks * 16));
        else
            flush_read_normal<<<read_blocks, 512>>>(flush_buf, flush_chunks, sink);
    }
    // Median microseconds of the streaming read of a buffer of `bytes`: the read floor.
    float read_us(size_t bytes) const {
        int4* buf;
        CK(cudaMalloc(&buf, bytes));
        CK(cudaMemset(buf, 1, bytes));
        const float t = median_us([&] { read(buf, static_cast<long long>(bytes / 16)); });
        CK(cudaFree(buf));
        return t;
    }
    // Median microseconds of `launch()` between two events, each after a flush and then
    // `before()` (queued outside the events: trace.cu's warm-code launch).
    template <typename Launch, typename Before>
    float median_us(Launch launch, Before before) const {
        std::vector<float> us;
        for (int i = 0; i < 200; ++i) {
            flush();
            before();
            CK(cudaEventRecord(a));
            launch();
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (i >= 20) us.push_back(ms * 1000.f);
        }
        std::sort(us.begin(), us.end());
        return us[us.size() / 2];
    }
    template <typename Launch>
    float median_us(Launch launch) const {
        return median_us(launch, [] {});
    }
};
