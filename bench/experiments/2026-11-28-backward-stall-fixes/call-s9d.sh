#!/usr/bin/env bash
# Session 9, call D: run.sh of this folder (carry nothing but the working tree).
set -u
mkdir -p $OUT/d
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/d/gpu.txt
timeout -k 10 560 bash bench/experiments/2026-11-28-backward-stall-fixes/run.sh $OUT/d 2>&1 | tee $OUT/d/run.txt
tar czf $OUT/d.tgz -C $OUT d && rm -rf $OUT/d
