// common.cuh: the little every stage shares. One kernel signature (AttnParams), dtype
// conversions, the constants of the exp2 softmax, and the macro that exports a kernel
// under the name the Rust harness looks up. Book: "Introduction", "How to run it".
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <stddef.h>

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
    // Read only by a stage's timeline kernels (timeline.cuh), null and 0 otherwise: where the
    // phases are recorded, how many blocks record, and how many events each warpgroup may.
    void* timeline;
    int timeline_blocks, timeline_stride;
};
// The layout the Rust side passes by value; harness/src/params.rs pins the same offsets.
static_assert(sizeof(void*) == 8, "flashlab's kernels and harness assume 64-bit pointers");
static_assert(offsetof(AttnParams, q) == 0 && offsetof(AttnParams, k) == 8 && offsetof(AttnParams, v) == 16 &&
                  offsetof(AttnParams, o) == 24 && offsetof(AttnParams, lse) == 32 && offsetof(AttnParams, scratch) == 40,
              "AttnParams pointers differ from harness/src/params.rs");
static_assert(offsetof(AttnParams, batch) == 48 && offsetof(AttnParams, heads) == 52 && offsetof(AttnParams, kv_heads) == 56 &&
                  offsetof(AttnParams, seqlen_q) == 60 && offsetof(AttnParams, seqlen_k) == 64 &&
                  offsetof(AttnParams, head_dim) == 68 && offsetof(AttnParams, causal) == 72 &&
                  offsetof(AttnParams, scale) == 76 && offsetof(AttnParams, scale_log2) == 80 &&
                  offsetof(AttnParams, timeline) == 88 && offsetof(AttnParams, timeline_blocks) == 96 &&
                  offsetof(AttnParams, timeline_stride) == 100 && sizeof(AttnParams) == 104,
              "AttnParams scalars differ from harness/src/params.rs");

// A kernel's tile constant checked against the value its stage's Rust side launches with:
// `src/tiles.rs` is the one definition, and `build.rs` passes each of its constants to
// nvcc as -DFLASHLAB_HOST_<NAME>. A mismatch is a compile error, not a wrong launch.
#define FLASHLAB_SAME_AS_HOST(name) \
    static_assert(name == FLASHLAB_HOST_##name, #name " differs from the stage's src/tiles.rs")

// A compile-time int as a value, for generic lambdas: `tile(Int<1>{})` compiles the tile's
// masked variant, `decltype(MASKED)::value` reads it back.
template <int N>
struct Int {
    static constexpr int value = N;
};

FL_HOST_DEVICE constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The last key index query row `i` may see (exclusive bound), for causal masking.
FL_HOST_DEVICE int causal_key_end(const AttnParams& p, int i) { return i + p.seqlen_k - p.seqlen_q + 1; }

// Whether a tile of keys kv_start .. kv_start + block_kv - 1 needs a mask for a block whose
// first query row is q_start: when it reaches past the keys, or (causal) past that row's
// last key. The first row sees the fewest keys, so a tile whole for it is whole for all.
FL_HOST_DEVICE bool tile_needs_mask(const AttnParams& p, int kv_start, int block_kv, int q_start) {
    return kv_start + block_kv > p.seqlen_k || (p.causal && kv_start + block_kv > causal_key_end(p, q_start));
}

// Runs `tile(Int<1>{})` for a tile that needs a mask and `tile(Int<0>{})` for the rest, so
// the common, unmasked tile is compiled without the mask's instructions and registers
// (stage 8: "Masked tiles apart").
template <int BLOCK_KV, typename Tile>
__device__ __forceinline__ void masked_or_not(const AttnParams& p, int kv_start, int q_start, Tile&& tile) {
    if (tile_needs_mask(p, kv_start, BLOCK_KV, q_start))
        tile(Int<1>{});
    else
        tile(Int<0>{});
}

// Element offsets of row (b, s, h) in a BSHD tensor. 64-bit so that the product never
// overflows before the bounds check the harness does (each tensor < 2^31 elements).
FL_HOST_DEVICE long long q_row_offset(const AttnParams& p, int b, int s, int h) {
    return ((static_cast<long long>(b) * p.seqlen_q + s) * p.heads + h) * p.head_dim;
}
FL_HOST_DEVICE long long kv_row_offset(const AttnParams& p, int b, int s, int kv_head) {
    return ((static_cast<long long>(b) * p.seqlen_k + s) * p.kv_heads + kv_head) * p.head_dim;
}
// Index of query row s of head h, batch b, in the [batch, heads, seqlen_q] LSE tensor.
FL_HOST_DEVICE long long lse_index(const AttnParams& p, int b, int h, int s) {
    return (static_cast<long long>(b) * p.heads + h) * p.seqlen_q + s;
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

// ANCHOR: quad_reduce
// The four lanes 4g..4g+3 of a quad share a row: of an mma's C fragment (fragments.cuh),
// and of stage 2's row groups. Two XOR shuffles give each of them the whole row's max or sum.
__device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffff, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffff, x, 1);
    return x + __shfl_xor_sync(0xffffffff, x, 2);
}
// ANCHOR_END: quad_reduce
// The same over a whole warp: five XOR shuffles (the decode stages' merges of splits).
__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, offset));
    return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffff, x, offset);
    return x;
}

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
// harness::kernels::kernel_name builds, taking one `Params` by value, with the block size
// the launch must use.
#define FLASHLAB_EXPORT_WITH(Params, prefix, body, T, tname, D, threads)                        \
    extern "C" __global__ void __launch_bounds__(threads, 1) prefix##_##tname##_d##D(const Params p) { \
        body<T, D>(p);                                                                        \
    }
// The four variants every CUDA-core and mma.sync stage builds: bf16/f16 x head dim 64/128.
#define FLASHLAB_EXPORT_ALL_WITH(Params, prefix, body, threads)                  \
    FLASHLAB_EXPORT_WITH(Params, prefix, body, __nv_bfloat16, bf16, 64, threads)  \
    FLASHLAB_EXPORT_WITH(Params, prefix, body, __nv_bfloat16, bf16, 128, threads) \
    FLASHLAB_EXPORT_WITH(Params, prefix, body, __half, f16, 64, threads)          \
    FLASHLAB_EXPORT_WITH(Params, prefix, body, __half, f16, 128, threads)
// The prefill stages' kernels take AttnParams.
#define FLASHLAB_EXPORT_ALL(prefix, body, threads) FLASHLAB_EXPORT_ALL_WITH(flashlab::AttnParams, prefix, body, threads)
