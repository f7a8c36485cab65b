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

#include "check.cuh"

// The kernels themselves are the harness's (harness/kernels/ceilings.cu).
#include "../../harness/kernels/ceilings.cu"

template <int ILP>
__global__ void mma_peak(float* out, int iters) {
    mma_sync_stream<ILP>(out, iters);
}

// One warm-up launch, then the best of 5 timed with events, in ms (*best). 1 on a CUDA error.
template <typename Launch>
int best_ms(Launch launch, float* best) {
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    *best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
        CHECK(cudaEventRecord(e0));
        launch();
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaGetLastError());
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < *best) *best = ms;
    }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return 0;
}

template <int ILP>
int run(int sms, int threads, int blocks_per_sm, float* out) {
    const int iters = 4096 * 8 / ILP;
    const int grid = sms * blocks_per_sm;
    float best;
    if (best_ms([&] { mma_peak<ILP><<<grid, threads>>>(out, iters); }, &best)) return 1;
    const double flops = 2.0 * 16 * 8 * 16 * (double)ILP * iters * (threads / 32) * (double)grid;
    const int warps_per_smsp = threads / 32 * blocks_per_sm / 4;
    printf("mma.sync bf16  warps/sub-partition %2d  ILP %2d  %7.1f TFLOPS  (%.3f ms)\n", warps_per_smsp, ILP,
           flops / (best * 1e-3) / 1e12, best);
    return 0;
}

int run_l2(int sms, int blocks_per_sm, int threads, const int4* src, size_t chunks, int* sink) {
    const int tiles = 2000, grid = sms * blocks_per_sm;
    const int smem = 2 * 32768;  // ceiling_l2_to_smem's 2-slot ring
    CHECK(cudaFuncSetAttribute(ceiling_l2_to_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    float best;
    if (best_ms([&] { ceiling_l2_to_smem<<<grid, threads, smem>>>(src, (long long)chunks, tiles, sink); }, &best)) return 1;
    const double bytes = 32768.0 * tiles * grid;
    printf("L2->smem cp.async  blocks/SM %d  threads %d  ring 2 x 32 KB  %6.2f TB/s\n", blocks_per_sm, threads,
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
    rc |= run_l2(sms, 1, 256, src, chunks, reinterpret_cast<int*>(out));
    rc |= run_l2(sms, 2, 128, src, chunks, reinterpret_cast<int*>(out));
    CHECK(cudaFree(src));
    CHECK(cudaFree(out));
    return rc;
}
