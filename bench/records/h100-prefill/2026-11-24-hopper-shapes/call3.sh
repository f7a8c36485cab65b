#!/usr/bin/env bash
# Session 9, call 3: the TMA probe, sanitize 10 and 11, and the issue's shapes with SDPA's
# flash and cuDNN in the same run (stages 9, 10, 11; batch 1, 16 heads; d64 and d128; causal both).
cd "$(dirname "$0")"
mkdir -p $OUT/logs; L=$OUT/logs
timeout 120 ./tests/stage10-tma-tma_probe --include-ignored > $L/probes.txt 2>&1; echo "rc $?" >> $L/probes.txt
timeout 120 ./tests/stage10-tma-gpu --include-ignored --test-threads=1 > $L/st10-tests.txt 2>&1; echo "rc $?" >> $L/st10-tests.txt
timeout 150 ./sanitize.sh 10 > $L/sanitize10.txt 2>&1; echo "rc $?" >> $L/sanitize10.txt
timeout 150 ./sanitize.sh 11 > $L/sanitize11.txt 2>&1; echo "rc $?" >> $L/sanitize11.txt
timeout 400 ./flashlab bench --stages 9,10,11 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --out $L/hopper-issue-shapes > $L/bench.txt 2>&1; echo "rc $?" >> $L/bench.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
