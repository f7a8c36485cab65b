#!/usr/bin/env bash
set -u
mkdir -p $OUT/e3
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/e3/gpu.txt
timeout -k 10 560 bash bench/experiments/2026-11-28-backward-warp-tiles/run3.sh $OUT/e3 2>&1 | tee $OUT/e3/run.txt
tar czf $OUT/e3.tgz -C $OUT e3 && rm -rf $OUT/e3
