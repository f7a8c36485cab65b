"""FlashAttention-4's Hopper forward, launched once for a profiler.

Usage: python3 fa4_once.py SEQLEN HEAD_DIM [causal]   (batch 1, 16 heads, bf16)

The first call compiles the kernel (the CuTe DSL compiles at its first call) and runs it;
the second runs between cudaProfilerStart and cudaProfilerStop, so a profiler started with
`--profile-from-start off` sees that launch alone. Inputs are N(0.5, 1), as flashlab's.
"""
import math
import sys

import torch
from flash_attn.cute import flash_attn_func

seqlen, head_dim = int(sys.argv[1]), int(sys.argv[2])
causal = len(sys.argv) > 3 and sys.argv[3] == "causal"
q, k, v = (torch.randn(1, seqlen, 16, head_dim, device="cuda", dtype=torch.bfloat16) + 0.5 for _ in range(3))
scale = 1.0 / math.sqrt(head_dim)
flash_attn_func(q, k, v, causal=causal, softmax_scale=scale)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
flash_attn_func(q, k, v, causal=causal, softmax_scale=scale)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print(f"fa4_once: seqlen {seqlen} head_dim {head_dim} causal {causal}: launched once under the profiler")
