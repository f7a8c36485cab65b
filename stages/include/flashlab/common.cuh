// common.cuh: the little every stage shares. One kernel signature (AttnParams), dtype
// conversions, the constants of the exp2 softmax, and the macro that exports a kernel
// under the name the Rust harness looks up. Book: "The harness".
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

#include "hostdev.cuh"

namespace flashlab {

// Mirrors harness/src/params.rs field for field (its test pins the layout).
// Q, O: [batch, seqlen_q, heads, head_dim]; K, V: [batch, seqlen_k, kv_heads, head_dim];
// lse: [batch, heads, seqlen_q] fp32, natural log; scratch: stage-specific workspace.
struct AttnParams {
    const void* q;
    const void* k;
    const void* v;
    void* o;
    float* lse;
    float* scratch;
    int batch, heads, kv_heads, seqlen_q, seqlen_k, head_dim;
    int causal;        // bottom-right aligned: query i sees key j iff j <= i + seqlen_k - seqlen_q
    float scale;       // softmax scale, 1/sqrt(head_dim) by default
    float scale_log2;  // scale * log2(e): exp(s * scale) == exp2(s * scale_log2)
};

FL_HOST_DEVICE constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The last key index query row `i` may see (exclusive bound), for causal masking.
FL_HOST_DEVICE int causal_key_end(const AttnParams& p, int i) { return i + p.seqlen_k - p.seqlen_q + 1; }

// Element offsets of row (b, s, h) in a BSHD tensor. 64-bit so that the product never
// overflows before the bounds check the harness does (each tensor < 2^31 elements).
FL_HOST_DEVICE long long q_row_offset(const AttnParams& p, int b, int s, int h) {
    return ((static_cast<long long>(b) * p.seqlen_q + s) * p.heads + h) * p.head_dim;
}
FL_HOST_DEVICE long long kv_row_offset(const AttnParams& p, int b, int s, int kv_head) {
    return ((static_cast<long long>(b) * p.seqlen_k + s) * p.kv_heads + kv_head) * p.head_dim;
}
// GQA: each group of heads / kv_heads query heads reads one K/V head.
FL_HOST_DEVICE int kv_head_of(const AttnParams& p, int h) { return h / (p.heads / p.kv_heads); }

#if defined(__CUDACC__)
template <typename T>
__device__ __forceinline__ float to_float(T x);
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <>
__device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }

// ANCHOR: fast_exp2
// 2^x with one MUFU.EX2 instruction. exp2f adds range fix-ups for denormal results
// (a compare and two multiplies); softmax flushes those to zero anyway.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
// ANCHOR_END: fast_exp2

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
#endif

}  // namespace flashlab

// Exports `body<T, D>` as an extern "C" kernel named `<prefix>_<bf16|f16>_d<D>`, the name
// harness::kernels::kernel_name builds, with the block size the launch must use.
#define FLASHLAB_EXPORT(prefix, body, T, tname, D, threads)                                   \
    extern "C" __global__ void __launch_bounds__(threads, 1) prefix##_##tname##_d##D(const flashlab::AttnParams p) { \
        body<T, D>(p);                                                                        \
    }

// The four variants every CUDA-core and mma.sync stage builds: bf16/f16 x head dim 64/128.
#define FLASHLAB_EXPORT_ALL(prefix, body, threads)                  \
    FLASHLAB_EXPORT(prefix, body, __nv_bfloat16, bf16, 64, threads)  \
    FLASHLAB_EXPORT(prefix, body, __nv_bfloat16, bf16, 128, threads) \
    FLASHLAB_EXPORT(prefix, body, __half, f16, 64, threads)          \
    FLASHLAB_EXPORT(prefix, body, __half, f16, 128, threads)
