#!/usr/bin/env bash
# Session 9, call C: profile.sh of this folder (carry nothing but the working tree).
set -u
mkdir -p $OUT/c
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/c/gpu.txt
timeout -k 10 560 bash bench/experiments/2026-11-28-backward-stalls-beside-fa2/profile.sh $OUT/c 2>&1 | tee $OUT/c/run.txt
tar czf $OUT/c.tgz -C $OUT c && rm -rf $OUT/c
