#!/usr/bin/env bash
# Session 16, call 8: the cold split sweep of stage 15 at D256 (batch 1 at 8k and 32k keys,
# batch 8 at 8k), which call 1's bench did not finish; the rule counts 66 slots there.
set -u
cd "$(dirname "$0")"
xz -d -k -f flashlab.xz && chmod +x flashlab
mkdir -p "$OUT/d256"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/d256/gpu.txt"
run() { name=$1; shift; start=$(date +%s)
  timeout 150 ./flashlab bench --decode --stages 15 --decode-dim 256 --out "$OUT/d256/$name" "$@" > "$OUT/d256/$name.txt" 2>&1
  echo "$name exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/d256/gpu.txt"; }
run b1 --decode-batches 1 --decode-cache-lens 8192,32768
run b8 --decode-batches 8 --decode-cache-lens 8192
cat "$OUT/d256"/b*/decode-table.md 2>/dev/null
