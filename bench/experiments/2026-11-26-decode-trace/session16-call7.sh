#!/usr/bin/env bash
# Session 16, call 6: is the last split's merge slow because its code is cold? Stage 15
# traced (7ef4ebd) beside the same kernel with the merge's split loops not unrolled
# (#pragma unroll 1 for unroll 8: a third less code), rounds interleaved.
set -u
cd "$(dirname "$0")"
for b in trace-base trace-unroll1; do xz -d -k -f $b.xz; chmod +x $b; done
mkdir -p "$OUT/u"
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for shape in "1 2048 16" "1 8192 16" "1 32768 16" "8 8192 2"; do
    for b in trace-base trace-unroll1; do echo "== $b round $round"; timeout 60 ./$b $shape; done
  done
done
} > "$OUT/u/unroll.txt" 2>&1
grep -E "^==|^shape|^events|traced launch|key loop done|merge \(last|copies landed|chunk on|merge done" "$OUT/u/unroll.txt"
