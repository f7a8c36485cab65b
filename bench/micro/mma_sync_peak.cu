// The ceiling of stages 3-5: how fast mma.sync.m16n8k16 (bf16 in, fp32 accumulate) runs on
// this GPU when nothing else competes, by warps per SM sub-partition and by independent
// accumulators per warp (ILP). cuBLAS's number in `flashlab info` is wgmma's ceiling, which
// stages 3-5 cannot reach. `flashlab info` runs the same two measurements from
// harness/kernels/ceilings.cu; this standalone version also sweeps warps per scheduler and ILP
// (bench/experiments/2026-11-21-mma-sync-peak.txt). Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a
// -gencode=arch=compute_80,code=sm_80 mma_sync_peak.cu -o mma_sync_peak
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

template <int ILP>
__global__ void mma_peak(float* out, int iters) {
    // Operands with varied bits (finite bf16 values near 1), not zeros: zeros toggle less.
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = 0x3f803f80u ^ ((threadIdx.x * 2654435761u + i * 40503u) & 0x007f007fu);
    for (int i = 0; i < 2; ++i) b[i] = 0x3f803f80u ^ ((threadIdx.x * 2246822519u + i * 9973u) & 0x007f007fu);
    float acc[ILP][4] = {};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int j = 0; j < ILP; ++j)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < ILP; ++j) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int ILP>
int run(int sms, int threads, int blocks_per_sm, float* out) {
    const int iters = 4096 * 8 / ILP;
    const int grid = sms * blocks_per_sm;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    mma_peak<ILP><<<grid, threads>>>(out, iters);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
        CHECK(cudaEventRecord(e0));
        mma_peak<ILP><<<grid, threads>>>(out, iters);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaGetLastError());
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    const double flops = 2.0 * 16 * 8 * 16 * (double)ILP * iters * (threads / 32) * (double)grid;
    const int warps_per_smsp = threads / 32 * blocks_per_sm / 4;
    printf("mma.sync bf16  warps/sub-partition %2d  ILP %2d  %7.1f TFLOPS  (%.3f ms)\n", warps_per_smsp, ILP,
           flops / (best * 1e-3) / 1e12, best);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return 0;
}

// L2 to shared memory through cp.async, the path stage 5's K/V tiles take: each block
// streams 32 KB tiles (a 64 x 128 bf16 K tile plus its V tile) from a buffer that fits in L2
// into a ring of STAGES slots, every thread copying 16-byte chunks, as load_tile_async does.
template <int STAGES>
__global__ void l2_to_smem(const int4* __restrict__ src, size_t src_chunks, int tiles, int* sink) {
    extern __shared__ int4 ring[];
    constexpr int TILE_CHUNKS = 32768 / 16;
    size_t base = (size_t(blockIdx.x) * 7919 * TILE_CHUNKS) % src_chunks;
    auto issue = [&](int t) {
        int4* dst = ring + (t % STAGES) * TILE_CHUNKS;
        size_t off = (base + size_t(t) * TILE_CHUNKS) % src_chunks;
        for (int c = threadIdx.x; c < TILE_CHUNKS; c += blockDim.x) {
            unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst + c));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src + off + c));
        }
        asm volatile("cp.async.commit_group;\n" ::);
    };
    for (int s = 0; s < STAGES - 1; ++s) issue(s);
    int acc = 0;
    for (int t = 0; t < tiles; ++t) {
        issue(t + STAGES - 1);
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 1));
        __syncthreads();
        acc += reinterpret_cast<int*>(ring + (t % STAGES) * TILE_CHUNKS)[threadIdx.x];
        __syncthreads();
    }
    if (acc == 0x12345678) sink[0] = acc;
}

template <int STAGES>
int run_l2(int sms, int blocks_per_sm, int threads, const int4* src, size_t chunks, int* sink) {
    const int tiles = 2000, grid = sms * blocks_per_sm;
    const int smem = STAGES * 32768;
    CHECK(cudaFuncSetAttribute(l2_to_smem<STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    l2_to_smem<STAGES><<<grid, threads, smem>>>(src, chunks, tiles, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
        CHECK(cudaEventRecord(e0));
        l2_to_smem<STAGES><<<grid, threads, smem>>>(src, chunks, tiles, sink);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaGetLastError());
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    const double bytes = 32768.0 * tiles * grid;
    printf("L2->smem cp.async  blocks/SM %d  threads %d  ring %d x 32 KB  %6.2f TB/s\n", blocks_per_sm, threads, STAGES,
           bytes / (best * 1e-3) / 1e12);
    return 0;
}

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    float* out;
    CHECK(cudaMalloc(&out, 64 << 20));
    const int sms = prop.multiProcessorCount;
    int rc = 0;
    for (int threads : {128, 256, 512}) {
        rc |= run<1>(sms, threads, 1, out);
        rc |= run<2>(sms, threads, 1, out);
        rc |= run<4>(sms, threads, 1, out);
        rc |= run<8>(sms, threads, 1, out);
        rc |= run<16>(sms, threads, 1, out);
    }
    // A 16 MB source: in L2 (50 MB or more on Hopper), as one head's K and V are.
    const size_t chunks = (16u << 20) / 16;
    int4* src;
    CHECK(cudaMalloc(&src, chunks * 16));
    CHECK(cudaMemset(src, 1, chunks * 16));
    rc |= run_l2<2>(sms, 1, 256, src, chunks, reinterpret_cast<int*>(out));
    rc |= run_l2<4>(sms, 1, 256, src, chunks, reinterpret_cast<int*>(out));
    rc |= run_l2<2>(sms, 2, 128, src, chunks, reinterpret_cast<int*>(out));
    rc |= run_l2<3>(sms, 2, 128, src, chunks, reinterpret_cast<int*>(out));
    rc |= run_l2<6>(sms, 1, 256, src, chunks, reinterpret_cast<int*>(out));
    CHECK(cudaFree(src));
    CHECK(cudaFree(out));
    return rc;
}
