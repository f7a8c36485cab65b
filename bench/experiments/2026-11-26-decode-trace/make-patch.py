#!/usr/bin/env python3
"""Writes trace.patch: stage 15's kernel (the working tree's) with the nine TRACE points
that trace.cu defines. Run from the repository root after the kernel changes."""
import difflib

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
diff = difflib.unified_diff(src.splitlines(True), out.splitlines(True), path, "flash_decode_fused_traced.cu")
open("bench/experiments/2026-11-26-decode-trace/trace.patch", "w").writelines(diff)
