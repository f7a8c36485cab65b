#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck of stage N on a small problem (odd length,
# causal with seqlen_q > seqlen_k for fully masked rows, GQA). Usage: sanitize.sh N
set -euo pipefail
cd "$(dirname "$0")"
./unpack.sh
n="$1"
# Like ncu.sh and sass.sh: name what is missing and where it usually lives.
sanitizer=""
for c in "${COMPUTE_SANITIZER:-}" "$(command -v compute-sanitizer || true)" \
         "${CUDA_HOME:+$CUDA_HOME/bin/compute-sanitizer}" /usr/local/cuda/bin/compute-sanitizer; do
    if [ -n "$c" ] && [ -x "$c" ]; then sanitizer="$c"; break; fi
done
if [ -z "$sanitizer" ]; then
    echo "sanitize.sh: compute-sanitizer not found: set COMPUTE_SANITIZER=/path/to/compute-sanitizer, or install the CUDA toolkit (it lives in \$CUDA_HOME/bin; the pip toolchain in .toolchain has none). GPU machines with the toolkit have it." >&2
    exit 2
fi
small=(--batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --no-time)
# A prefill stage: its smallest head dim, causal, in its first dtype; then its largest up to
# 128 in its last (64 causal bf16 and 128 f16 for most; 64 causal and 128, bf16, for the
# FP8 stages, which have one dtype; 128 causal and 128 for stage 24, which has one head dim).
read -r workload low high first_dtype last_dtype < <(./flashlab list --json | python3 -c 'import json, sys
n = int(sys.argv[1])
s = next(s for s in json.load(sys.stdin) if s["number"] == n)
dims = [d for d in s["head_dims"] if d <= 128] or s["head_dims"]
print(s["workload"], min(dims), max(dims), s["dtypes"][0], s["dtypes"][-1])' "$n")
first=(--dim "$low" --causal --dtype "$first_dtype")
other=(--dim "$high" --dtype "$last_dtype")
# A decode stage (`flashlab list --json`) gets decode problems: several cache lengths,
# paged caches whose last pages are part full (pages of 16, where each key's row goes
# through the table, and of 64, where a tile lies in one page), splits that leave some
# empty, speculative causal rows; then a contiguous cache.
if [ "$workload" = decode ]; then
    small=(--heads 8 --kv-heads 2 --seqlen-q 3 --cache-lens 200,1,77 --no-time)
    first=(--dim 64 --causal --page-size 16 --splits 5)
    other=(--dim 128 --dtype f16 --page-size 64 --splits 2)
    # The decode stages also build head dim 256 (one block an SM: 200 KiB of ring).
    third=(--dim 256 --splits 3)
fi
# A backward stage runs the small problem's forward and backward; the third run takes the
# deterministic order, whose blocks wait on one another through counters in global memory.
if [ "$workload" = backward ]; then
    third=(--dim "$high" --causal --deterministic)
fi
for tool in memcheck racecheck synccheck; do
    "$sanitizer" --tool "$tool" --error-exitcode 1 ./flashlab stage "$n" "${small[@]}" "${first[@]}"
    "$sanitizer" --tool "$tool" --error-exitcode 1 ./flashlab stage "$n" "${small[@]}" "${other[@]}"
    if [ -n "${third+x}" ]; then
        "$sanitizer" --tool "$tool" --error-exitcode 1 ./flashlab stage "$n" "${small[@]}" "${third[@]}"
    fi
done
echo "sanitize stage $n: no errors"
