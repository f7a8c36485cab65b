#!/usr/bin/env bash
# The device call for run.sh (carry nothing but the working tree): wrapped in timeout, logs in one archive.
set -u
mkdir -p $OUT/ss
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/ss/gpu.txt
timeout -k 10 560 bash bench/experiments/2026-11-28-backward-stepped-stores/run.sh $OUT/ss 2>&1 | tee $OUT/ss/run.txt
tar czf $OUT/ss.tgz -C $OUT ss && rm -rf $OUT/ss
