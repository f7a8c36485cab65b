#!/usr/bin/env bash
# Session 10, call 6: stages 12 and 13 with three consumer warpgroups at d64 (and two at
# d128 as before): a canary, their GPU tests, sanitize, and a first speed look beside stage 11.
cd "$(dirname "$0")"
mkdir -p $OUT/logs; L=$OUT/logs
nvidia-smi -L > $L/gpu.txt
for s in 12 13; do timeout -k 2 20 ./flashlab stage $s --batch 1 --heads 2 --seqlen 1000 --dim 64 --no-time 2>&1 | tail -n 1; echo "canary $s rc $?"; done
for s in 12-warp-specialized 13-ping-pong; do
  timeout -k 5 100 ./tests/stage$s-gpu --include-ignored --test-threads=1 > $L/tests-$s.txt 2>&1; echo "rc $?" >> $L/tests-$s.txt
  tail -n 3 $L/tests-$s.txt
done
for s in 12 13; do timeout -k 5 100 ./sanitize.sh $s > $L/sanitize$s.txt 2>&1; echo "rc $?" >> $L/sanitize$s.txt; tail -n 2 $L/sanitize$s.txt; done
for c in "" --causal; do for S in 4096 16384; do for s in 11 12 13; do
  echo "== stage $s d64 S$S $c"; timeout -k 5 30 ./flashlab stage $s --batch 1 --heads 16 --seqlen $S --dim 64 $c 2>&1 | grep -E "check|speed|rror"
done; done; done > $L/speed.txt 2>&1
grep -E "^==|speed" $L/speed.txt | paste -d' ' - - | awk '{print $3, $4, $5, $6, $7, $8}' | sed 's/speed//'
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
