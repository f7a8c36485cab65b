// Can a warp issue other work while its own mma.sync runs? Each warp issues 4 independent
// mma.sync.m16n8k16 (bf16 in, fp32 accumulate) per iteration and, between them, F
// independent FFMAs and X independent MUFU.EX2 (its softmax's instructions). If the warp
// could not issue during its own HMMA's stall, cycles per iteration would grow by about one
// per added instruction; if it can, they stay at the tensor pipe's pace until the issue
// slots run out. One and two warps per SM sub-partition (128 and 256 threads, one block
// per SM). Prints cycles per mma (clock64, block 0's warp 0). Book: "Stage 5: cp.async
// pipelining", step 10. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a mma_overlap.cu
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#include "check.cuh"
// The stages' own mma.sync wrapper.
#include "../../kernel-headers/include/flashlab/mma.cuh"

template <int F, int X>
__global__ void overlap(float* out, long long* cycles, int iters) {
    constexpr int ILP = 4;
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = 0x3f803f80u ^ ((threadIdx.x * 2654435761u + i * 40503u) & 0x007f007fu);
    for (int i = 0; i < 2; ++i) b[i] = 0x3f803f80u ^ ((threadIdx.x * 2246822519u + i * 9973u) & 0x007f007fu);
    float acc[ILP][4] = {};
    // Independent chains for the FFMAs and MUFUs, 8 each so none waits on its own latency.
    float f[8], x[8];
    for (int i = 0; i < 8; ++i) { f[i] = threadIdx.x * 1e-3f + i; x[i] = -1e-3f * (threadIdx.x + i); }
    __syncthreads();
    const long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int j = 0; j < ILP; ++j) {
            flashlab::mma_m16n8k16<__nv_bfloat16>(acc[j], a, b[0], b[1]);
#pragma unroll
            for (int k = 0; k < F / ILP; ++k) {
                const int c = (j * (F / ILP) + k) % 8;
                asm volatile("fma.rn.f32 %0, %0, 0f3F7FFFF0, 0f3A83126F;\n" : "+f"(f[c]));
            }
#pragma unroll
            for (int k = 0; k < X / ILP; ++k) {
                const int c = (j * (X / ILP) + k) % 8;
                asm volatile("ex2.approx.ftz.f32 %0, %0;\n" : "+f"(x[c]));
            }
        }
    }
    const long long t1 = clock64();
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < ILP; ++j) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    for (int i = 0; i < 8; ++i) s += f[i] + x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (blockIdx.x == 0 && threadIdx.x == 0) *cycles = t1 - t0;
}

template <int F, int X>
int run(int sms, float* out, long long* cycles) {
    const int iters = 8192;
    for (int threads : {128, 256}) {
        overlap<F, X><<<sms, threads>>>(out, cycles, iters);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        long long c = 0;
        CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
        // Per sub-partition, `threads / 128` warps each issue 4 mma per iteration.
        const double per_mma = static_cast<double>(c) / (iters * 4.0 * (threads / 128));
        printf("warps/sub-partition %d  FFMA per mma %5.2f  MUFU per mma %5.2f   %6.2f cycles per mma\n", threads / 128,
               F / 4.0, X / 4.0, per_mma);
    }
    return 0;
}

int main() {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float* out;
    long long* cycles;
    CHECK(cudaMalloc(&out, sizeof(float) * sms * 256));
    CHECK(cudaMalloc(&cycles, sizeof(long long)));
    int rc = 0;
    rc |= run<0, 0>(sms, out, cycles);
    rc |= run<4, 0>(sms, out, cycles);
    rc |= run<8, 0>(sms, out, cycles);
    rc |= run<16, 0>(sms, out, cycles);
    rc |= run<24, 0>(sms, out, cycles);
    rc |= run<32, 0>(sms, out, cycles);
    rc |= run<0, 4>(sms, out, cycles);
    rc |= run<0, 8>(sms, out, cycles);
    rc |= run<16, 4>(sms, out, cycles);
    rc |= run<16, 8>(sms, out, cycles);
    return rc;
}
