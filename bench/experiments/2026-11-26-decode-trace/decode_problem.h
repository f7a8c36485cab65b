// A decode problem on the GPU for the experiments (trace.cu here,
// ../2026-11-26-decode-cluster/cluster.cu): `batch` sequences of `len` keys, one query
// row, bf16, contiguous K/V from the host vectors given, fp32 partials for up to
// `max_splits` splits, the counters zeroed. The caller sets num_splits and
// tiles_per_split. Include flashlab/decode.cuh first.
#pragma once
#include "ck.h"
#include <cuda_bf16.h>
#include <cmath>
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
