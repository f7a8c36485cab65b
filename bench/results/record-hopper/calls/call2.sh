#!/usr/bin/env bash
# Session 10, call 2: stages 12 and 13 against the oracle (GPU tests) after the register
# fix, a first speed look beside stage 11 (batch 1, 16 heads, bf16), sanitize 12 and 13.
cd "$(dirname "$0")"
mkdir -p $OUT/logs; L=$OUT/logs
nvidia-smi -L > $L/gpu.txt
# A one-shot canary first: if the kernel still hangs, say so in seconds, not minutes.
for s in 12 13; do timeout -k 2 20 ./flashlab stage $s --batch 1 --heads 2 --seqlen 1000 --dim 128 --no-time 2>&1 | tail -n 2; echo "canary $s rc $?"; done
for s in 12-warp-specialized 13-ping-pong; do
  timeout -k 5 150 ./tests/stage$s-gpu --include-ignored --test-threads=1 > $L/tests-$s.txt 2>&1; echo "rc $?" >> $L/tests-$s.txt
  tail -n 4 $L/tests-$s.txt
done
for d in 128 64; do for c in "" --causal; do for S in 4096 16384; do for s in 11 12 13; do
  echo "== stage $s d$d S$S $c"; timeout -k 5 30 ./flashlab stage $s --batch 1 --heads 16 --seqlen $S --dim $d $c 2>&1 | grep -E "check|speed|rror"
done; done; done; done > $L/speed.txt 2>&1
grep -E "^==|speed|FAIL|rror" $L/speed.txt | paste -d' ' - - | awk '{print $3, $4, $5, $6, $9}'
for s in 12 13; do timeout -k 5 120 ./sanitize.sh $s > $L/sanitize$s.txt 2>&1; echo "rc $?" >> $L/sanitize$s.txt; tail -n 2 $L/sanitize$s.txt; done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
