"""What fa4_once.py and cudnn_once.py share: their arguments, their inputs, and one call run
twice, the second alone under a profiler started with `--profile-from-start off`.

Usage of either: python3 SCRIPT SEQLEN HEAD_DIM [causal]   (batch 1, 16 heads, bf16)
"""
import math
import sys

import torch


def args():
    """(seqlen, head_dim, causal, softmax scale) from the command line."""
    seqlen, head_dim = int(sys.argv[1]), int(sys.argv[2])
    causal = len(sys.argv) > 3 and sys.argv[3] == "causal"
    return seqlen, head_dim, causal, 1.0 / math.sqrt(head_dim)


def inputs(shape):
    """Q, K and V of `shape` in bf16, N(0.5, 1) as flashlab's."""
    return tuple(torch.randn(*shape, device="cuda", dtype=torch.bfloat16) + 0.5 for _ in range(3))


def under_profiler(name, call):
    """`call()` once to compile or plan, then once between cudaProfilerStart and Stop."""
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    seqlen, head_dim, causal, _ = args()
    print(f"{name}: seqlen {seqlen} head_dim {head_dim} causal {causal}: launched once under the profiler")
