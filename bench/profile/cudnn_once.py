"""cuDNN's fused attention through PyTorch's SDPA, launched once for a profiler.

Usage: python3 cudnn_once.py SEQLEN HEAD_DIM [causal]   (batch 1, 16 heads, bf16)

The first call warms the backend up (cuDNN builds its plan then); the second runs between
cudaProfilerStart and cudaProfilerStop, so a profiler started with `--profile-from-start off`
sees that call alone. Inputs are N(0.5, 1), as flashlab's.
"""
import math
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention

seqlen, head_dim = int(sys.argv[1]), int(sys.argv[2])
causal = len(sys.argv) > 3 and sys.argv[3] == "causal"
q, k, v = (torch.randn(1, 16, seqlen, head_dim, device="cuda", dtype=torch.bfloat16) + 0.5 for _ in range(3))
scale = 1.0 / math.sqrt(head_dim)
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
print(f"cudnn_once: seqlen {seqlen} head_dim {head_dim} causal {causal}: launched once under the profiler")
