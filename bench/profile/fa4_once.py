"""FlashAttention-4's Hopper forward, launched once for a profiler.

Usage: python3 fa4_once.py SEQLEN HEAD_DIM [causal]   (batch 1, 16 heads, bf16)

The first call compiles the kernel (the CuTe DSL compiles at its first call) and runs it;
the second runs between cudaProfilerStart and cudaProfilerStop, so a profiler started with
`--profile-from-start off` sees that launch alone (once.py). Inputs are N(0.5, 1), as flashlab's.
"""
from flash_attn.cute import flash_attn_func

from once import args, inputs, under_profiler

seqlen, head_dim, causal, scale = args()
q, k, v = inputs((1, seqlen, 16, head_dim))
under_profiler("fa4_once", lambda: flash_attn_func(q, k, v, causal=causal, softmax_scale=scale))
