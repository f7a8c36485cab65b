#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck of stage N on a small problem (odd length,
# causal with seqlen_q > seqlen_k for fully masked rows, GQA). Usage: sanitize.sh N
set -euo pipefail
cd "$(dirname "$0")"
n="$1"
small=(--batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --no-time)
for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 1 ./flashlab stage "$n" "${small[@]}" --dim 64 --causal
    compute-sanitizer --tool "$tool" --error-exitcode 1 ./flashlab stage "$n" "${small[@]}" --dim 128 --dtype f16
done
echo "sanitize stage $n: no errors"
