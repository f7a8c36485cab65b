#!/usr/bin/env bash
# Session 8, call A: FP8 at head dims 64 and 256 (the record's call-h1.sh), with stage 22's
# two-blocks experiment built in the background and measured after.
set -u
root="$(pwd)"
exp=bench/experiments/2026-11-28-backward-two-blocks-d64
mkdir -p $OUT/e
( bash $exp/run.sh $OUT/e build > $OUT/e/build.txt 2>&1 ) &
bpid=$!
timeout -k 10 420 bash bench/experiments/2026-11-28-fp8-head-dims-not-run/call-h1.sh
wait $bpid; cat $OUT/e/build.txt
timeout -k 10 150 bash $exp/run.sh $OUT/e measure 2>&1 | tee $OUT/e/run.txt
tar czf $OUT/e.tgz -C $OUT e && rm -rf $OUT/e
