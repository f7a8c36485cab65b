#!/usr/bin/env bash
# Session 10, call 1: stages 12 and 13 against the oracle (GPU tests), a first speed look
# beside stage 11 (batch 1, 16 heads, bf16, d128 and d64, causal both), sanitize 12 and 13.
cd "$(dirname "$0")"
mkdir -p $OUT/logs; L=$OUT/logs
nvidia-smi -L > $L/gpu.txt
for s in 12-warp-specialized 13-ping-pong; do
  timeout -k 5 240 ./tests/stage$s-gpu --include-ignored --test-threads=1 > $L/tests-$s.txt 2>&1; echo "rc $?" >> $L/tests-$s.txt
  tail -n 3 $L/tests-$s.txt
done
for d in 128 64; do for c in "" --causal; do for S in 4096 8192 16384; do for s in 11 12 13; do
  echo "== stage $s d$d S$S $c"; timeout -k 5 60 ./flashlab stage $s --batch 1 --heads 16 --seqlen $S --dim $d $c 2>&1 | grep -E "check|speed|rror"
done; done; done; done > $L/speed.txt 2>&1
grep -A2 "^==" $L/speed.txt | grep -E "^==|speed|FAIL|rror" | paste - - | awk '{print $3, $4, $5, $6, $9}' | head -80
for s in 12 13; do timeout -k 5 200 ./sanitize.sh $s > $L/sanitize$s.txt 2>&1; echo "rc $?" >> $L/sanitize$s.txt; tail -n 2 $L/sanitize$s.txt; done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
