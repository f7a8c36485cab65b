#!/usr/bin/env bash
set -u
mkdir -p $OUT/e4
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/e4/gpu.txt
timeout -k 10 560 bash bench/experiments/2026-11-28-backward-warp-tiles/run4.sh $OUT/e4 2>&1 | tee $OUT/e4/run.txt
tar czf $OUT/e4.tgz -C $OUT e4 && rm -rf $OUT/e4
