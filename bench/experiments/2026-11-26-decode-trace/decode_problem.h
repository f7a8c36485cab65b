// A decode problem on the GPU for the experiments (trace.cu here, and the drivers of
// ../2026-11-26-decode-* that include it), and what they check of its outputs.
// upload_decode_problem: `batch` sequences of `len` keys, one query row, bf16,
// contiguous K/V from the host vectors given, fp32 partials for up to
// `max_splits` splits, the counters zeroed. The caller sets num_splits and
// tiles_per_split. Include flashlab/decode.cuh first.
#pragma once
#include "ck.h"
#include <cuda_bf16.h>
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

inline flashlab::DecodeParams upload_decode_problem(int batch, int len, int heads, int kv_heads, int d,
                                                    int max_splits, const std::vector<__nv_bfloat16>& h_q,
                                                    const std::vector<__nv_bfloat16>& h_k,
                                                    const std::vector<__nv_bfloat16>& h_v) {
    const size_t kv_elems = static_cast<size_t>(batch) * len * kv_heads * d, q_elems = h_q.size();
    __nv_bfloat16 *q, *k, *v, *o;
    float *lse, *o_part, *lse_part;
    int *seqlens, *counters;
    CK(cudaMalloc(&q, q_elems * 2));
    CK(cudaMalloc(&k, kv_elems * 2));
    CK(cudaMalloc(&v, kv_elems * 2));
    CK(cudaMalloc(&o, q_elems * 2));
    CK(cudaMalloc(&lse, batch * heads * 4));
    CK(cudaMalloc(&o_part, static_cast<size_t>(max_splits) * q_elems * 4));
    CK(cudaMalloc(&lse_part, static_cast<size_t>(max_splits) * batch * heads * 4));
    CK(cudaMalloc(&seqlens, batch * 4));
    CK(cudaMalloc(&counters, batch * kv_heads * 4));
    CK(cudaMemcpy(q, h_q.data(), q_elems * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(k, h_k.data(), kv_elems * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(v, h_v.data(), kv_elems * 2, cudaMemcpyHostToDevice));
    const std::vector<int> h_len(batch, len);
    CK(cudaMemcpy(seqlens, h_len.data(), batch * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(counters, 0, batch * kv_heads * 4));

    flashlab::DecodeParams p{};
    p.attn.q = q, p.attn.k = k, p.attn.v = v, p.attn.o = o, p.attn.lse = lse;
    p.attn.batch = batch, p.attn.heads = heads, p.attn.kv_heads = kv_heads, p.attn.seqlen_q = 1;
    p.attn.seqlen_k = len, p.attn.head_dim = d, p.attn.scale = 1.f / sqrtf(d);
    p.attn.scale_log2 = p.attn.scale * 1.4426950408889634f;
    p.seqlens_k = seqlens, p.o_partial = o_part, p.lse_partial = lse_part;
    p.group = heads / kv_heads, p.split_counters = counters;
    return p;
}

// Q, K and V at random, away from zero mean (K in [0.2, 1.2), V in [0.5, 2.5), Q in [0.3,
// 1.3)), uploaded as upload_decode_problem does.
inline flashlab::DecodeParams random_decode_problem(int batch, int len, int heads, int kv_heads, int d, int max_splits) {
    const size_t kv_elems = static_cast<size_t>(batch) * len * kv_heads * d, q_elems = static_cast<size_t>(batch) * heads * d;
    std::vector<__nv_bfloat16> h_k(kv_elems), h_v(kv_elems), h_q(q_elems);
    srand(1);
    for (auto& x : h_k) x = __float2bfloat16(0.2f + (rand() % 1000) / 1000.f);
    for (auto& x : h_v) x = __float2bfloat16(0.5f + (rand() % 1000) / 500.f);
    for (auto& x : h_q) x = __float2bfloat16(0.3f + (rand() % 1000) / 1000.f);
    return upload_decode_problem(batch, len, heads, kv_heads, d, max_splits, h_q, h_k, h_v);
}

// random_decode_problem's value ranges, from a generator fast enough for 268M elements.
inline flashlab::DecodeParams fast_random_problem(int batch, int len, int heads, int kv_heads, int d, int max_splits) {
    const size_t kv = static_cast<size_t>(batch) * len * kv_heads * d, nq = static_cast<size_t>(batch) * heads * d;
    std::vector<__nv_bfloat16> k(kv), v(kv), q(nq);
    uint32_t x = 2463534242u;
    auto next = [&] { x ^= x << 13, x ^= x >> 17, x ^= x << 5; return (x % 1000) / 1000.f; };
    for (auto& e : k) e = __float2bfloat16(0.2f + next());
    for (auto& e : v) e = __float2bfloat16(0.5f + 2.f * next());
    for (auto& e : q) e = __float2bfloat16(0.3f + next());
    return upload_decode_problem(batch, len, heads, kv_heads, d, max_splits, q, k, v);
}

// `splits` splits of the keys, each as many 64-key tiles as the longest sequence needs.
inline void set_splits(flashlab::DecodeParams& p, int splits) {
    const int key_tiles = (p.attn.seqlen_k + 63) / 64;
    p.num_splits = splits;
    p.tiles_per_split = (key_tiles + splits - 1) / splits;
}

inline size_t o_elems(const flashlab::DecodeParams& p) {
    return static_cast<size_t>(p.attn.batch) * p.attn.seqlen_q * p.attn.heads * p.attn.head_dim;
}

// NaN in every element of O, so that an element no launch writes shows.
inline void poison_output(const flashlab::DecodeParams& p) { CK(cudaMemset(p.attn.o, 0xff, o_elems(p) * 2)); }

// O (bf16, as floats) and the LSE of the last launch, on the host.
struct DecodeOutputs {
    std::vector<float> o, lse;
};
inline DecodeOutputs fetch_outputs(const flashlab::DecodeParams& p) {
    const size_t n = o_elems(p), rows = n / p.attn.head_dim;
    std::vector<__nv_bfloat16> o(n);
    CK(cudaMemcpy(o.data(), p.attn.o, n * 2, cudaMemcpyDeviceToHost));
    DecodeOutputs out{std::vector<float>(n), std::vector<float>(rows)};
    for (size_t i = 0; i < n; ++i) out.o[i] = __bfloat162float(o[i]);
    CK(cudaMemcpy(out.lse.data(), p.attn.lse, rows * 4, cudaMemcpyDeviceToHost));
    return out;
}

// One line: the largest differences of O and LSE from `ref` (the one-split run), and how
// many elements of O are not finite.
inline void print_difference(const char* what, int splits, const DecodeOutputs& got, const DecodeOutputs& ref) {
    double err_o = 0, err_lse = 0;
    size_t bad = 0;
    for (size_t i = 0; i < got.o.size(); ++i) {
        if (!std::isfinite(got.o[i])) ++bad;
        err_o = std::max(err_o, static_cast<double>(fabsf(got.o[i] - ref.o[i])));
    }
    for (size_t i = 0; i < got.lse.size(); ++i) err_lse = std::max(err_lse, static_cast<double>(fabsf(got.lse[i] - ref.lse[i])));
    printf("    %s x%d: max |O - O_1split| %.4g, max |LSE - LSE_1split| %.4g, non-finite %zu\n", what, splits, err_o, err_lse,
           bad);
}
