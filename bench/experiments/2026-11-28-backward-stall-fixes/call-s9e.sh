#!/usr/bin/env bash
# Session 9, call E: run.sh of this folder on the committed kernel, b, and the orders with
# dQ before dK (f, e's REDs under dK's k-steps as h) and the RED without its memory clobber (g, h).
set -u
mkdir -p $OUT/e
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/e/gpu.txt
VS="25 b-dq-rows f-dq-rows-before-dk g-dq-rows-free-red h-reds-under-dk-free" NCU_TOO=0 timeout -k 10 560 bash bench/experiments/2026-11-28-backward-stall-fixes/run.sh $OUT/e 2>&1 | tee $OUT/e/run.txt
tar czf $OUT/e.tgz -C $OUT e && rm -rf $OUT/e
