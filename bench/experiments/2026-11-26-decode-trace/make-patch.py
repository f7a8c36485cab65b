#!/usr/bin/env python3
"""Writes trace.patch: stage 15's kernel (the working tree's) with the nine TRACE points
that trace.cu defines. Run from the repository root after the kernel changes.
With --prefetch, writes trace-prefetch.patch instead: the same, plus session 17's trial of
an L2 prefetch of the split's first tiles before the sequence's length is known. With
--nochain, trace-nochain.patch: the splits stop after writing their partial results."""
import difflib
import sys

# Session 17's trial: a block's first load is the sequence's length (0.5 us from memory
# after the flush), and only then are its first tiles' copies issued. Here each thread
# first asks the L2 for its share of the first NSTAGES - 1 tiles' K and V lines, up to the
# cache's capacity (contiguous caches only: a paged one would need the table first).
PREFETCH = """    if (p.block_table == nullptr) {
        const int kvh = blockIdx.z % p.attn.kv_heads, bb = blockIdx.z / p.attn.kv_heads;
        constexpr int LINES = D * static_cast<int>(sizeof(T)) / 128;  // 128-byte lines a row
        const int first = blockIdx.x * p.tiles_per_split * BLOCK_KV;
        for (int i = threadIdx.x; i < (NSTAGES - 1) * BLOCK_KV * LINES; i += blockDim.x) {
            const int j = first + i / LINES;
            if (j >= p.attn.seqlen_k) break;
            const long long off = ((static_cast<long long>(bb) * p.attn.seqlen_k + j) * p.attn.kv_heads + kvh) * D + i % LINES * (128 / sizeof(T));
            asm volatile("prefetch.global.L2 [%0];" ::"l"(static_cast<const T*>(p.attn.k) + off));
            asm volatile("prefetch.global.L2 [%0];" ::"l"(static_cast<const T*>(p.attn.v) + off));
        }
    }
"""

path = "stages/15-fused-combine/kernels/flash_decode_fused.cu"
src = open(path).read()
points = [
    ("    extern __shared__ __align__(128) unsigned char smem[];\n", "    TRACE(8);\n"),
    ("    // ANCHOR_END: split_range\n", "    TRACE(0);\n"),
    ("        if (t == 0) {\n", "            TRACE(1);\n"),
    ("    __syncthreads();  // the ring is free: the merge below reuses it\n", "    TRACE(2);\n"),
    ("    // ANCHOR_END: epilogue\n", "    TRACE(3);\n"),
]
out = src
for after, text in points:
    assert out.count(after) == 1, after
    out = out.replace(after, after + text)
before = "    __syncthreads();\n    if (!last_split) return;\n"
assert out.count(before) == 1
out = out.replace(before, "    __syncthreads();\n    TRACE(4);\n    if (!last_split) return;\n")
fenced = "    if (!last_split) return;\n"
assert out.count(fenced) == 1
out = out.replace(fenced, fenced + "    TRACE(6);\n")
landed = "        cp_async_wait<0>();\n        __syncthreads();\n"
assert out.count(landed) == 1
out = out.replace(landed, landed + "        if (s0 == 0) TRACE(7);\n")
end = "    // ANCHOR_END: merge_splits\n"
assert out.count(end) == 1
out = out.replace(end, "    __syncthreads();\n    TRACE(5);\n" + end)
name = "trace.patch"
if "--nochain" in sys.argv[1:]:
    # Session 17's bound: every split writes its partial results and stops; nothing is
    # counted or merged, so O is wrong and only the time means anything. What a merge of
    # any design could at most save.
    stop = "    if (final_result) return;\n"
    assert out.count(stop) == 1
    out = out.replace(stop, "    return;  // session 17: no count, no merge (timing only)\n")
    name = "trace-nochain.patch"
if "--prefetch" in sys.argv[1:]:
    entry = "    TRACE(8);\n"
    assert out.count(entry) == 1
    out = out.replace(entry, entry + PREFETCH)
    name = "trace-prefetch.patch"
diff = difflib.unified_diff(src.splitlines(True), out.splitlines(True), path, "flash_decode_fused_traced.cu")
open("bench/experiments/2026-11-26-decode-trace/" + name, "w").writelines(diff)
