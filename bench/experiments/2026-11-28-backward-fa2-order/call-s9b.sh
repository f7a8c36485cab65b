#!/usr/bin/env bash
# Session 9, call B: run.sh of this folder (carry nothing but the working tree).
set -u
mkdir -p $OUT/b
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/b/gpu.txt
timeout -k 10 500 bash bench/experiments/2026-11-28-backward-fa2-order/run.sh $OUT/b 2>&1 | tee $OUT/b/run.txt
tar czf $OUT/b.tgz -C $OUT b && rm -rf $OUT/b
