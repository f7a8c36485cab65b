#!/usr/bin/env bash
# Session 9, call F: run.sh of this folder on the committed kernel, i (the next step's loads
# queued after the second barrier) and j (i and b).
set -u
mkdir -p $OUT/f
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/f/gpu.txt
VS="25 i-loads-after-ds j-loads-after-ds-dq-rows" NCU_TOO=0 timeout -k 10 560 bash bench/experiments/2026-11-28-backward-stall-fixes/run.sh $OUT/f 2>&1 | tee $OUT/f/run.txt
tar czf $OUT/f.tgz -C $OUT f && rm -rf $OUT/f
