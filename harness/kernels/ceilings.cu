// ceilings.cu: two measured ceilings of the mma.sync stages (3-5), for `flashlab info` and
// the bench: how fast the tensor cores run mma.sync when nothing else competes, and how
// fast cp.async moves tiles from L2 into shared memory. cuBLAS's GEMM (the other ceiling
// in `flashlab info`) uses wgmma on Hopper, which these stages do not.
// Book: "Stage 5: cp.async pipelining".
#include <stdint.h>

// Every warp issues ILP independent mma.sync.m16n8k16 (bf16 in, fp32 accumulate) per
// iteration; operands are fixed registers with varied bits (not zeros, which toggle less).
// FLOPs: 2 * 16 * 8 * 16 * ILP * iters per warp. bench/micro/mma_sync_peak.cu sweeps ILP.
template <int ILP>
__device__ __forceinline__ void mma_sync_stream(float* out, int iters) {
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = 0x3f803f80u ^ ((threadIdx.x * 2654435761u + i * 40503u) & 0x007f007fu);
    for (int i = 0; i < 2; ++i) b[i] = 0x3f803f80u ^ ((threadIdx.x * 2246822519u + i * 9973u) & 0x007f007fu);
    float acc[ILP][4] = {};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int j = 0; j < ILP; ++j)
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                "{%0,%1,%2,%3};\n"
                : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < ILP; ++j) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void __launch_bounds__(512) ceiling_mma_sync(float* out, int iters) { mma_sync_stream<8>(out, iters); }

// Stage 5's tile path without the math: each block streams 32 KiB tiles (a 64 x 128 bf16
// K tile and its V tile) from `src`, small enough to stay in L2, into a 2-slot ring in
// shared memory, 16 bytes per cp.async, waiting and synchronizing per tile as stage 5
// does. Bytes: 32 KiB * tiles per block. Needs 64 KiB of dynamic shared memory.
extern "C" __global__ void __launch_bounds__(256) ceiling_l2_to_smem(const int4* __restrict__ src, long long src_chunks,
                                                                     int tiles, int* sink) {
    constexpr int STAGES = 2, TILE_CHUNKS = 32768 / 16;
    extern __shared__ int4 ring[];
    const long long base = (static_cast<long long>(blockIdx.x) * 7919 * TILE_CHUNKS) % src_chunks;
    auto issue = [&](int t) {
        int4* dst = ring + (t % STAGES) * TILE_CHUNKS;
        const long long off = (base + static_cast<long long>(t) * TILE_CHUNKS) % src_chunks;
        for (int c = threadIdx.x; c < TILE_CHUNKS; c += blockDim.x) {
            const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst + c));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src + off + c));
        }
        asm volatile("cp.async.commit_group;\n" ::);
    };
    issue(0);
    int acc = 0;
    for (int t = 0; t < tiles; ++t) {
        issue(t + 1);
        asm volatile("cp.async.wait_group 1;\n" ::);
        __syncthreads();
        acc += reinterpret_cast<const int*>(ring + (t % STAGES) * TILE_CHUNKS)[threadIdx.x];
        __syncthreads();
    }
    asm volatile("cp.async.wait_all;\n" ::);  // the last, unused tile lands before the block ends
    if (acc == 0x12345678) sink[0] = acc;       // keeps the reads; never true for the data used
}

// ANCHOR: read_ceiling
// The streaming read, the decode stages' roofline: a read of all of `src` that keeps only
// the XOR of what it read, so nothing is written but one impossible sink. Bytes: the
// buffer once. Each block of READ_THREADS threads reads one contiguous slab of
// READ_THREADS * READ_LOADS 16-byte chunks (8 KiB), READ_LOADS independent loads a thread,
// and the hardware hands the blocks to SMs as they free up (harness/src/sol.rs launches
// one block a slab; with fewer, each block takes every gridDim.x-th slab). __ldcs:
// streaming loads, their lines allocated evict-first. Until session 18 this was a
// grid-stride loop, four blocks of 512 threads an SM with four loads in flight a thread
// (still the flush's, below); that read 2-4% slower from 33.5 MB up, 3092 GB/s against
// 3185 at 1 GiB on an H100, and as fast at 8 MB (bench/experiments/2026-11-26-read-floor;
// book: "Stage 14: flash decode", "The roofline is a read").
constexpr int READ_THREADS = 256, READ_LOADS = 2;
#ifdef FLASHLAB_HOST_READ_THREADS  // harness/build.rs defines them; an experiment's nvcc line may not
static_assert(READ_THREADS == FLASHLAB_HOST_READ_THREADS && READ_LOADS == FLASHLAB_HOST_READ_LOADS,
              "the streaming read's slab differs from harness/src/tiles.rs");
#endif
extern "C" __global__ void __launch_bounds__(READ_THREADS) ceiling_read(const int4* __restrict__ src, long long chunks,
                                                                        int* sink) {
    const long long slab = static_cast<long long>(READ_THREADS) * READ_LOADS;
    int acc = 0;
    for (long long base = blockIdx.x * slab + threadIdx.x; base < chunks; base += gridDim.x * slab) {
        int4 v[READ_LOADS];
#pragma unroll
        for (int u = 0; u < READ_LOADS; ++u) {
            const long long i = base + u * READ_THREADS;
            v[u] = i < chunks ? __ldcs(src + i) : make_int4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < READ_LOADS; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    if (acc == 0x12345678) sink[0] = acc;  // keeps the reads; the odds for random data are 2^-32
}
// ANCHOR_END: read_ceiling

// ANCHOR: l2_flush
// The decode runs' L2 flush: a read of a buffer twice the L2's size with plain loads, in a
// grid-stride loop, four blocks of 512 threads an SM with four loads in flight a thread.
// A flush by ceiling_read's __ldcs allocates its lines evict-first, and a flush made of
// evict-first lines evicts its own lines first: the last launch's K/V (evict-normal, as
// cp.async.cg leaves them) stayed wherever they fit. Stage 15 at batch 1 with 8k keys
// (33.5 MB, under the 50 MB L2) measured 2491 GB/s after that flush and 1680 after this
// one, on an H100 (book: "Results", "A flush that did not flush").
extern "C" __global__ void __launch_bounds__(512) l2_flush_read(const int4* __restrict__ src, long long chunks, int* sink) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    int acc = 0;
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < chunks; i += 4 * stride) {
        int4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < chunks; i += stride) {
        const int4 v = src[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678) sink[0] = acc;
}
// ANCHOR_END: l2_flush
