// wgmma_fp8_probe: wgmma_probe at 8 bits. One warpgroup records what the FP8 (E4M3) form of
// wgmma leaves in its accumulator and which byte of which thread's registers it takes as
// each element of A, so a GPU test can hold layout-viz's FP8 atoms (wgmma_a_fp8, and
// wgmma_c for the accumulator) to the hardware. E4M3 holds the integers 0..16 and the
// multiples of 64 up to 448 exactly, so the encodings below use only those.
// Book: "The 8-bit wgmma fragments" (the layouts primer).
//   c_ss: m64n64k32, A (64 x 32) and B (32 x 64) from shared memory, K-major (the only
//         layout FP8 takes), 128-byte swizzled: A(i, .) = {i % 8, i / 8, 1, 8, 0...} and
//         B(., j) = {1, 8, 64 (j % 8), 64 (j / 8), 0...}, so C(i, j) = i + 64 j.
//         Out: [thread][32].
//   c_rs: m64n64k32, A from registers, B the identity on its first 32 columns, so C(i, j)
//         for j < 32 is the A value the hardware took as A(i, j). Byte v of a thread's 16
//         (register v / 4, byte v % 4 from the low end) holds a base-16 digit of its id
//         16 t + v; three runs give the three digits. Out: [digit][thread][32].
#include <cuda_fp8.h>
#include <flashlab/swizzle.cuh>
#include <flashlab/tma.cuh>
#include <flashlab/wgmma.cuh>

namespace {
__device__ uint8_t e4m3(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }
// Byte (row, col) of a [64][128] byte tile as TMA's 128-byte swizzle leaves it.
__device__ int at(int row, int col) { return flashlab::swizzle<3, 4, 3>(row * 128 + col); }
}  // namespace

extern "C" __global__ void __launch_bounds__(128, 1) wgmma_fp8_probe(float* c_ss, float* c_rs) {
    using namespace flashlab;
    __shared__ __align__(1024) uint8_t a_smem[64 * 128];   // A: [64 rows][128 bytes], K in bytes 0..31
    __shared__ __align__(1024) uint8_t bt_smem[64 * 128];  // B^T: [64 columns j][128 bytes]
    const int t = threadIdx.x;
    for (int i = t; i < 64 * 128; i += 128) {
        const int row = i / 128, col = i % 128;
        const float a = col == 0 ? row % 8 : col == 1 ? row / 8 : col == 2 ? 1.f : col == 3 ? 8.f : 0.f;
        const float b = col == 0 ? 1.f : col == 1 ? 8.f : col == 2 ? 64.f * (row % 8) : col == 3 ? 64.f * (row / 8) : 0.f;
        a_smem[at(row, col)] = e4m3(a);
        bt_smem[at(row, col)] = e4m3(b);
    }
    // The operands were written by ordinary stores and are read by the async proxy.
    fence_proxy_async_smem();
    __syncthreads();

    float d[32];
    wgmma_fence();
    wgmma_ss_e4m3<64>(d, wgmma_desc_sw128(a_smem, 16, 1024), wgmma_desc_sw128(bt_smem, 16, 1024), false);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands(d);
    for (int v = 0; v < 32; ++v) c_ss[t * 32 + v] = d[v];

    __syncthreads();  // every thread's product has read bt_smem
    for (int i = t; i < 64 * 128; i += 128) {
        const int j = i / 128, k = i % 128;
        bt_smem[at(j, k)] = e4m3(j == k && k < 32 ? 1.f : 0.f);
    }
    fence_proxy_async_smem();
    __syncthreads();
    for (int digit = 0; digit < 3; ++digit) {
        uint32_t a[4];
        for (int r = 0; r < 4; ++r) {
            a[r] = 0;
            for (int byte = 0; byte < 4; ++byte) {
                const int id = 16 * t + 4 * r + byte;
                a[r] |= uint32_t(e4m3(float((id >> (4 * digit)) & 15))) << (8 * byte);
            }
        }
        wgmma_fence();
        wgmma_rs_e4m3<64>(d, a, wgmma_desc_sw128(bt_smem, 16, 1024), false);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(d);
        for (int v = 0; v < 32; ++v) c_rs[(digit * 128 + t) * 32 + v] = d[v];
    }
}
