#!/usr/bin/env bash
# Session 15, call 11 (H100): does the L2 flush flush? The copy-only ring and stage 15
# (lean addresses) timed after three flushes: flashlab's (__ldcs reads, evict-first),
# plain reads (evict-normal), a memset.
set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/flush.txt"
for m in ldcs normal memset ldcs; do
  echo "=== FLASHLAB_FLUSH=$m" >> "$OUT/flush.txt"
  FLASHLAB_FLUSH=$m timeout 60 ./stream 1 1,8192,32 1,32768,32 8,2048,4 2>&1 | grep -E "^batch|cp.async ring 3" >> "$OUT/flush.txt"
  FLASHLAB_FLUSH=$m timeout 60 ./addr3 1 1,2048,16 1,8192,32 1,32768,16 8,2048,4 8,8192,2 2>&1 | grep -v "max |O" >> "$OUT/flush.txt"
done
cat "$OUT/flush.txt"
