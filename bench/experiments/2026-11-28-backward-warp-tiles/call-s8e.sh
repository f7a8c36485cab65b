#!/usr/bin/env bash
set -u
mkdir -p $OUT/e2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/e2/gpu.txt
timeout -k 10 560 bash bench/experiments/2026-11-28-backward-warp-tiles/run2.sh $OUT/e2 2>&1 | tee $OUT/e2/run.txt
tar czf $OUT/e2.tgz -C $OUT e2 && rm -rf $OUT/e2
