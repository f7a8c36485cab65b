// Is the decode bench's read floor a floor? The bench's "streaming read, same bytes"
// column was ceiling_read (harness/kernels/ceilings.cu as of d5813fb, grid_stride_read
// here: 4 blocks of 512 threads an SM, a grid-stride loop with four 16-byte loads in
// flight a thread). Since this experiment ceiling_read is its best slab read. Issue 20 asks for 1.5x
// the best baseline at batch 1 with 8k keys and 90% of the large read at batch 1 with 32k
// keys; ceiling_read itself reaches only 1.35x and 92% there. Could a read shaped another
// way move these same bytes sooner? Each variant reads a buffer once, keeps the XOR of
// what it read, and is timed by flushed_timer.h's clock (the L2 flushed before each launch,
// events around it, median of 180), as the bench times its kernels.
//   floor ROUNDS MB...   (MB: 10^6 bytes, rounded down to whole 16-byte chunks)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include "ceilings.cu"
#include "ck.h"
#include "flushed_timer.h"

__device__ __forceinline__ int4 load_cs(const int4* p) { return __ldcs(p); }
__device__ __forceinline__ int fold(int4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

// ceiling_read as it was when these calls ran (d5813fb): since session 18 ceilings.cu's
// ceiling_read is the slab read that this experiment found ("slabs 256 x 2" below).
__global__ void __launch_bounds__(512) grid_stride_read(const int4* __restrict__ src, long long chunks, int* sink) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    int acc = 0;
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < chunks; i += 4 * stride) {
        int4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) v[u] = load_cs(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < 4; ++u) acc ^= fold(v[u]);
    }
    for (; i < chunks; i += stride) acc ^= fold(load_cs(src + i));
    if (acc == 0x12345678) sink[0] = acc;
}

// ceiling_read's loop with U loads in flight a thread instead of four.
template <int U>
__global__ void __launch_bounds__(512) read_unrolled(const int4* __restrict__ src, long long chunks, int* sink) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    int acc = 0;
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < chunks; i += U * stride) {
        int4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = load_cs(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) acc ^= fold(v[u]);
    }
    for (; i < chunks; i += stride) acc ^= fold(load_cs(src + i));
    if (acc == 0x12345678) sink[0] = acc;
}

// No loop: a block of 256 threads reads one slab of 256 * U chunks, U loads a thread, and
// the hardware hands out the blocks as SMs free up (as many blocks as slabs).
template <int U>
__global__ void __launch_bounds__(256) read_slabs(const int4* __restrict__ src, long long chunks, int* sink) {
    const long long base = static_cast<long long>(blockIdx.x) * 256 * U + threadIdx.x;
    int4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = base + u * 256 < chunks ? load_cs(src + base + u * 256) : int4{0, 0, 0, 0};
    int acc = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= fold(v[u]);
    if (acc == 0x12345678) sink[0] = acc;
}

// Slabs again, with a block of T threads, U plain loads a thread, and the load's L2
// prefetch-size hint (ld.global.L2::128B / L2::256B: the L2 fetches that many bytes
// around the address from memory, where a plain load fetches the 32-byte sectors asked for).
template <int T, int U, int HINT>
__global__ void __launch_bounds__(T) read_slabs_hint(const int4* __restrict__ src, long long chunks, int* sink) {
    const long long base = static_cast<long long>(blockIdx.x) * T * U + threadIdx.x;
    int4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long i = base + u * T;
        int4 x = {0, 0, 0, 0};
        if (i < chunks) {
            if (HINT == 256)
                asm volatile("ld.global.nc.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w) : "l"(src + i));
            else if (HINT == 128)
                asm volatile("ld.global.nc.L2::128B.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w) : "l"(src + i));
            else
                x = src[i];
        }
        v[u] = x;
    }
    int acc = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= fold(v[u]);
    if (acc == 0x12345678) sink[0] = acc;
}

// One block an SM, each a contiguous share, copied into shared memory through a ring of
// NST slots of 32 KiB with 16-byte cp.async, as a decode split streams its keys (stages 14
// and 15 keep 2 tiles of 32 KiB in flight; here NST - 1).
template <int NST>
__global__ void __launch_bounds__(256) read_ring(const int4* __restrict__ src, long long chunks, int* sink) {
    constexpr int SLOT = 32768 / 16;  // chunks a slot
    extern __shared__ int4 slots[];
    const long long per_block = (chunks + gridDim.x - 1) / gridDim.x;
    const long long begin = blockIdx.x * per_block, end = min(chunks, begin + per_block);
    const int tiles = static_cast<int>((max(end - begin, 0ll) + SLOT - 1) / SLOT);
    auto issue = [&](int t) {
        if (t < tiles)
            for (int c = threadIdx.x; c < SLOT; c += blockDim.x) {
                const long long at = begin + static_cast<long long>(t) * SLOT + c;
                const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(slots + (t % NST) * SLOT + c));
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src + (at < end ? at : 0)),
                             "r"(at < end ? 16 : 0));
            }
        asm volatile("cp.async.commit_group;\n" ::);
    };
    for (int t = 0; t < NST - 1; ++t) issue(t);
    int acc = 0;
    for (int t = 0; t < tiles; ++t) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(NST - 2));
        __syncthreads();
        issue(t + NST - 1);
        acc ^= reinterpret_cast<const int*>(slots + (t % NST) * SLOT)[threadIdx.x];
    }
    asm volatile("cp.async.wait_all;\n" ::);
    if (acc == 0x12345678) sink[0] = acc;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: floor ROUNDS MB...\n");
        return 2;
    }
    const int rounds = atoi(argv[1]);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const FlushedTimer timer(prop);
    const int sms = prop.multiProcessorCount;
    int* sink;
    CK(cudaMalloc(&sink, 4));
    CK(cudaFuncSetAttribute(read_ring<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * 32768));
    CK(cudaFuncSetAttribute(read_ring<6>, cudaFuncAttributeMaxDynamicSharedMemorySize, 6 * 32768));
    printf("%s, %d SMs, L2 %d MiB\n", prop.name, sms, prop.l2CacheSize >> 20);
    for (int a = 2; a < argc; ++a) {
        const double mb = atof(argv[a]);
        const long long chunks = static_cast<long long>(mb * 1e6) / 16;
        const double bytes = chunks * 16.0;
        int4* buf;
        CK(cudaMalloc(&buf, chunks * 16));
        CK(cudaMemset(buf, 1, chunks * 16));
        for (int r = 0; r < rounds; ++r) {
            printf("%.1f MB, round %d (us, GB/s, against ceiling_read):\n", bytes / 1e6, r + 1);
            float t_ref = 0;
            auto row = [&](const char* name, auto launch) {
                const float t = timer.median_us(launch);
                CK(cudaGetLastError());
                if (t_ref == 0) t_ref = t;
                printf("  %-44s %9.2f %6.0f  %.3f\n", name, t, bytes / t / 1e3, t_ref / t);
            };
            row("ceiling_read (4/SM x 512, 4 in flight)", [&] { grid_stride_read<<<4 * sms, 512>>>(buf, chunks, sink); });
            row("l2_flush_read (the same, plain loads)", [&] { l2_flush_read<<<4 * sms, 512>>>(buf, chunks, sink); });
            row("unrolled 8 (4/SM x 512)", [&] { read_unrolled<8><<<4 * sms, 512>>>(buf, chunks, sink); });
            row("unrolled 16 (4/SM x 512)", [&] { read_unrolled<16><<<4 * sms, 512>>>(buf, chunks, sink); });
            row("unrolled 8 (1/SM x 512)", [&] { read_unrolled<8><<<sms, 512>>>(buf, chunks, sink); });
            row("unrolled 16 (2/SM x 512)", [&] { read_unrolled<16><<<2 * sms, 512>>>(buf, chunks, sink); });
            row("slabs of 256 x 4", [&] { read_slabs<4><<<(chunks + 1023) / 1024, 256>>>(buf, chunks, sink); });
            row("slabs of 256 x 8", [&] { read_slabs<8><<<(chunks + 2047) / 2048, 256>>>(buf, chunks, sink); });
            row("slabs of 256 x 16", [&] { read_slabs<16><<<(chunks + 4095) / 4096, 256>>>(buf, chunks, sink); });
            if (getenv("FLOOR_SLABS")) {  // session 18, call 2: the slab read's own variants
                row("slabs 256 x 4, plain loads", [&] { read_slabs_hint<256, 4, 0><<<(chunks + 1023) / 1024, 256>>>(buf, chunks, sink); });
                row("slabs 256 x 4, L2::128B", [&] { read_slabs_hint<256, 4, 128><<<(chunks + 1023) / 1024, 256>>>(buf, chunks, sink); });
                row("slabs 256 x 4, L2::256B", [&] { read_slabs_hint<256, 4, 256><<<(chunks + 1023) / 1024, 256>>>(buf, chunks, sink); });
                row("slabs 128 x 4, plain", [&] { read_slabs_hint<128, 4, 0><<<(chunks + 511) / 512, 128>>>(buf, chunks, sink); });
                row("slabs 512 x 4, plain", [&] { read_slabs_hint<512, 4, 0><<<(chunks + 2047) / 2048, 512>>>(buf, chunks, sink); });
                row("slabs 256 x 2, plain", [&] { read_slabs_hint<256, 2, 0><<<(chunks + 511) / 512, 256>>>(buf, chunks, sink); });
                row("slabs 128 x 8, L2::256B", [&] { read_slabs_hint<128, 8, 256><<<(chunks + 1023) / 1024, 128>>>(buf, chunks, sink); });
                row("ceiling_read again", [&] { grid_stride_read<<<4 * sms, 512>>>(buf, chunks, sink); });
            }
            row("cp.async ring 4 x 32 KiB (1/SM)", [&] { read_ring<4><<<sms, 256, 4 * 32768>>>(buf, chunks, sink); });
            row("cp.async ring 6 x 32 KiB (1/SM)", [&] { read_ring<6><<<sms, 256, 6 * 32768>>>(buf, chunks, sink); });
            row("cp.async ring 4 x 32 KiB (128 blocks)", [&] { read_ring<4><<<128, 256, 4 * 32768>>>(buf, chunks, sink); });
            row("ceiling_read since session 18 (slabs 256 x 2)", [&] { timer.read(buf, chunks); });
            row("nothing (an empty event pair)", [&] {});
        }
        fflush(stdout);
        CK(cudaFree(buf));
    }
    return 0;
}
