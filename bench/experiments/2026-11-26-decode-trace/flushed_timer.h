// The decode experiments' clock (trace.cu here, ../2026-11-26-decode-cluster/cluster.cu):
// one launch between two events, the L2 flushed before each by a read of twice its size
// with flashlab's streaming read (ceilings.cu's ceiling_read, as harness/src/sol.rs's
// StreamingRead flushes it), the median of 180 after 20 more. Include ceilings.cu first.
#pragma once
#include "ck.h"
#include <algorithm>
#include <vector>

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
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    // Queues flashlab's streaming read of `chunks` 16-byte chunks of `src`.
    void read(const int4* src, long long chunks) const { ceiling_read<<<read_blocks, 512>>>(src, chunks, sink); }
    void flush() const { read(flush_buf, flush_chunks); }
    // Median microseconds of the streaming read of a buffer of `bytes`: the read floor.
    float read_us(size_t bytes) const {
        int4* buf;
        CK(cudaMalloc(&buf, bytes));
        CK(cudaMemset(buf, 1, bytes));
        const float t = median_us([&] { read(buf, static_cast<long long>(bytes / 16)); });
        CK(cudaFree(buf));
        return t;
    }
    // Median microseconds of `launch()` between two events, each after a flush.
    template <typename Launch>
    float median_us(Launch launch) const {
        std::vector<float> us;
        for (int i = 0; i < 200; ++i) {
            flush();
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
};
