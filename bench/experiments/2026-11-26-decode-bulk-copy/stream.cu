// How fast can one block stream a decode split's K and V rows into shared memory, with no
// attention done on them? Stage 15 at one split per (sequence, K/V head) reads about 20
// GB/s a block whatever its ring depth (3, 4 or 6 slots: ../2026-11-26-decode-ring), where
// FlashAttention-4's TMA kernel reads about 35 GB/s a CTA at the same 64-CTA grid. This
// kernel does only the copies, in a ring of NST slots of 64 keys, two ways:
//   cp.async: 16 bytes a thread and copy, all 128 threads, as stages 14 and 15 load;
//   bulk:     one cp.async.bulk of a whole 256-byte row (one key of one head) a thread,
//             completing on the slot's mbarrier (128 rows of K and V a tile).
// The cache is [batch][key][kv_head][128] bf16 like the bench's; block (split, b * 8 + h)
// reads head h of sequence b over its split's keys. The L2 is flushed before each launch.
// Usage: stream ROUNDS BATCH,CACHE_LEN,SPLITS...
#include <cuda_bf16.h>
#include <cstdint>
#include <cstdio>
#include <flashlab/mbarrier.cuh>
#include <flashlab/mma.cuh>
#include "ceilings.cu"
#include "ck.h"
#include "flushed_timer.h"

using bf16 = __nv_bfloat16;
constexpr int D = 128, KV_HEADS = 8, TILE = 64, THREADS = 128;
constexpr int ROW_BYTES = D * 2;

template <bool BULK, int NST>
__global__ void __launch_bounds__(THREADS) stream_kv(const bf16* k, const bf16* v, int len, int keys_per_split, int* sink) {
    extern __shared__ __align__(128) unsigned char kv_ring[];  // [NST][K, V][TILE][ROW_BYTES]
    __shared__ __align__(8) uint64_t full[NST];
    const int b = blockIdx.y / KV_HEADS, h = blockIdx.y % KV_HEADS;
    const int key0 = blockIdx.x * keys_per_split, tiles = min(keys_per_split, len - key0) / TILE;
    auto row = [&](const bf16* base, int j) { return base + (static_cast<long long>(b * len + j) * KV_HEADS + h) * D; };
    auto slot_row = [&](int slot, int kv, int r) { return kv_ring + ((slot * 2 + kv) * TILE + r) * ROW_BYTES; };
    if (BULK) {
        if (threadIdx.x < NST) flashlab::mbarrier_init(&full[threadIdx.x], 1);
        flashlab::mbarrier_init_fence();
        __syncthreads();
    }
    auto issue = [&](int t) {
        if (t < tiles) {
            const int slot = t % NST, j0 = key0 + t * TILE;
            if (BULK) {
                if (threadIdx.x == 0) flashlab::mbarrier_arrive_expect_tx(&full[slot], 2 * TILE * ROW_BYTES);
                const int kv = threadIdx.x / TILE, r = threadIdx.x % TILE;
                asm volatile(
                    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                        flashlab::smem_addr(slot_row(slot, kv, r))),
                    "l"(row(kv ? v : k, j0 + r)), "r"(ROW_BYTES), "r"(flashlab::smem_addr(&full[slot]))
                    : "memory");
            } else {
#pragma unroll
                for (int i = 0; i < TILE / 8; ++i) {
                    const int r = threadIdx.x / 16 + i * 8, c = threadIdx.x % 16;
                    flashlab::cp_async_16(flashlab::smem_addr(slot_row(slot, 0, r) + c * 16), row(k, j0 + r) + c * 8);
                    flashlab::cp_async_16(flashlab::smem_addr(slot_row(slot, 1, r) + c * 16), row(v, j0 + r) + c * 8);
                }
            }
        }
        if (!BULK) flashlab::cp_async_commit();
    };
    for (int t = 0; t < NST - 1; ++t) issue(t);
    int acc = 0;
    for (int t = 0; t < tiles; ++t) {
        if (BULK)
            flashlab::mbarrier_wait(&full[t % NST], (t / NST) & 1);
        else
            flashlab::cp_async_wait<NST - 2>();
        __syncthreads();  // every thread is past tile t - 1: its slot takes tile t + NST - 1
        issue(t + NST - 1);
        acc ^= reinterpret_cast<const int*>(slot_row(t % NST, 0, 0))[threadIdx.x * 33 % (2 * TILE * ROW_BYTES / 4)];
    }
    if (acc == 0x12345678) sink[0] = acc;
}

template <bool BULK, int NST>
void run(const FlushedTimer& timer, const bf16* k, const bf16* v, int batch, int len, int splits, double bytes, float t_read,
         int* sink) {
    const int smem = NST * 2 * TILE * ROW_BYTES, keys = len / splits;
    auto kernel = stream_kv<BULK, NST>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
    const dim3 grid(splits, batch * KV_HEADS);
    const float t = timer.median_us([&] { kernel<<<grid, THREADS, smem>>>(k, v, len, keys, sink); });
    CK(cudaGetLastError());
    printf("  %-8s ring %d (%d a SM)  %8.2f us %6.0f GB/s, %5.1f GB/s a block (%.1f%% of the read)\n", BULK ? "bulk" : "cp.async",
           NST, per_sm, t, bytes / t / 1e3, bytes / t / 1e3 / (grid.x * grid.y), 100.0 * t_read / t);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: stream ROUNDS BATCH,CACHE_LEN,SPLITS...\n");
        return 2;
    }
    const int rounds = atoi(argv[1]);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const FlushedTimer timer(prop);
    int* sink;
    CK(cudaMalloc(&sink, 4));
    for (int a = 2; a < argc; ++a) {
        int batch, len, splits;
        if (sscanf(argv[a], "%d,%d,%d", &batch, &len, &splits) != 3 || len % (splits * TILE)) return 2;
        const size_t elems = static_cast<size_t>(batch) * len * KV_HEADS * D;
        bf16 *k, *v;
        CK(cudaMalloc(&k, elems * 2));
        CK(cudaMalloc(&v, elems * 2));
        CK(cudaMemset(k, 1, elems * 2));
        CK(cudaMemset(v, 2, elems * 2));
        const double bytes = 4.0 * elems;
        for (int r = 0; r < rounds; ++r) {
            const float t_read = timer.read_us(static_cast<size_t>(bytes));
            printf("batch %d cache %d splits %d (%d blocks), round %d, %s: read of the same bytes %.2f us %.0f GB/s\n", batch, len,
                   splits, splits * batch * KV_HEADS, r + 1, prop.name, t_read, bytes / t_read / 1e3);
            run<false, 3>(timer, k, v, batch, len, splits, bytes, t_read, sink);
            run<true, 3>(timer, k, v, batch, len, splits, bytes, t_read, sink);
            run<false, 6>(timer, k, v, batch, len, splits, bytes, t_read, sink);
            run<true, 6>(timer, k, v, batch, len, splits, bytes, t_read, sink);
        }
        fflush(stdout);
        CK(cudaFree(k));
        CK(cudaFree(v));
    }
    return 0;
}
