#!/usr/bin/env bash
# Session 16, call 1: cold split sweeps (the harness's plain-load flush, its first run)
# at D128 batch 1 (2k, 8k), D64 and D256 at batches 1 and 8 (8k, 32k), stage 15 only.
set -u
cd "$(dirname "$0")"
xz -d -k -f flashlab.xz && chmod +x flashlab
mkdir -p "$OUT/sw"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/sw/gpu.txt"
run() { name=$1; shift; start=$(date +%s)
  timeout 200 ./flashlab bench --decode --stages 15 --out "$OUT/sw/$name" "$@" > "$OUT/sw/$name.txt" 2>&1
  echo "$name exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/sw/gpu.txt"; }
run d128 --decode-batches 1 --decode-cache-lens 2048,8192
run d64 --decode-dim 64 --decode-batches 1,8 --decode-cache-lens 8192,32768
run d256 --decode-dim 256 --decode-batches 1,8 --decode-cache-lens 8192,32768
for d in d128 d64 d256; do cat "$OUT/sw/$d/decode-table.md" 2>/dev/null; done
cd "$OUT" && tar czf sw.tgz sw && rm -rf sw
