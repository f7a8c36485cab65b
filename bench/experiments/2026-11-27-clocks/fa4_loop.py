"""FlashAttention-4's Hopper forward in a loop for about SECONDS (batch 1, 16 heads, bf16),
for sampling the SM clock and power under its steady load."""
import math, sys, time
import torch
from flash_attn.cute import flash_attn_func
seqlen, head_dim, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
q, k, v = (torch.randn(1, seqlen, 16, head_dim, device="cuda", dtype=torch.bfloat16) + 0.5 for _ in range(3))
scale = 1.0 / math.sqrt(head_dim)
flash_attn_func(q, k, v, softmax_scale=scale)
torch.cuda.synchronize()
start = time.time()
print(f"start {start:.3f}", flush=True)
n = 0
while time.time() - start < seconds:
    for _ in range(20):
        flash_attn_func(q, k, v, softmax_scale=scale)
    torch.cuda.synchronize()
    n += 20
end = time.time()
print(f"end {end:.3f} launches {n} mean {1e3 * (end - start) / n:.3f} ms", flush=True)
