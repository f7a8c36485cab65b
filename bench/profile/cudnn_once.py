"""cuDNN's fused attention through PyTorch's SDPA, launched once for a profiler.

Usage: python3 cudnn_once.py SEQLEN HEAD_DIM [causal]   (batch 1, 16 heads, bf16)

The first call warms the backend up (cuDNN builds its plan then); the second runs between
cudaProfilerStart and cudaProfilerStop, so a profiler started with `--profile-from-start off`
sees that call alone (once.py). Inputs are N(0.5, 1), as flashlab's.
"""
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention

from once import args, inputs, under_profiler

seqlen, head_dim, causal, scale = args()
q, k, v = inputs((1, 16, seqlen, head_dim))
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    under_profiler("cudnn_once", lambda: scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale))
