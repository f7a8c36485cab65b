#!/usr/bin/env bash
# Session 10, call 3: the measured timelines of stages 11, 12 and 13 (bf16, batch 1, 16
# heads, seqlen 8192, d128; 13 also causal) with the instrumentation's overhead, and the
# timeline GPU test (every stage with timeline kernels, d128 and d64 causal).
cd "$(dirname "$0")"
mkdir -p $OUT/logs; L=$OUT/logs
nvidia-smi -L > $L/gpu.txt
timeout -k 5 100 ./tests/stage13-ping-pong-gpu --include-ignored --test-threads=1 > $L/tests-13.txt 2>&1; echo "rc $?" >> $L/tests-13.txt; tail -n 3 $L/tests-13.txt
timeout -k 5 120 ./tests/flashlab-timeline --include-ignored --test-threads=1 > $L/timeline-test.txt 2>&1; echo "rc $?" >> $L/timeline-test.txt
tail -n 4 $L/timeline-test.txt
for s in 11 12 13; do
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $L/timeline-$s.svg --json $L/timeline-$s.json > $L/timeline-$s.txt 2>&1; echo "rc $?" >> $L/timeline-$s.txt
  cat $L/timeline-$s.txt | head -40
done
timeout -k 5 60 ./flashlab timeline 13 --batch 1 --heads 16 --seqlen 8192 --dim 128 --causal --blocks 2 --out $L/timeline-13-causal.svg --json $L/timeline-13-causal.json > $L/timeline-13-causal.txt 2>&1; echo "rc $?" >> $L/timeline-13-causal.txt
timeout -k 5 60 ./flashlab timeline 13 --batch 1 --heads 16 --seqlen 8192 --dim 64 --blocks 2 --out $L/timeline-13-d64.svg --json $L/timeline-13-d64.json > $L/timeline-13-d64.txt 2>&1; echo "rc $?" >> $L/timeline-13-d64.txt
grep -h overhead $L/timeline-13-*.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
