#!/usr/bin/env bash
# Session 9, call A: the backward stages' GPU tests on the build of 2616acd (the shared
# three-kernel launch and stage 25's advance() came after the last GPU call), sanitize.sh 25,
# then the prepared stepped-stores experiment (committed stage 25 beside v4, standalone).
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/a
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/a/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/a/gpu.txt
for n in 25-backward-warp-tiles 22-backward 23-hopper-backward; do
  start=$(date +%s)
  timeout -k 10 150 tests/stage$n-gpu --include-ignored --test-threads=1 > $OUT/a/tests-$n.txt 2>&1
  echo "tests $n exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/a/tests-$n.txt | cut -c1-90)"
  grep -E "panicked|FAIL|failed" $OUT/a/tests-$n.txt | head -8 | cut -c1-300
done
start=$(date +%s)
timeout -k 10 120 ./sanitize.sh 25 > $OUT/a/sanitize25.txt 2>&1
echo "sanitize 25 exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/a/sanitize25.txt)"
cd $root
timeout -k 10 200 bash bench/experiments/2026-11-28-backward-stepped-stores-not-run/run.sh $OUT/a/ss 2>&1 | tee $OUT/a/ss-run.txt | grep -vE "^(bf16|f16) d"
tar czf $OUT/a.tgz -C $OUT a && rm -rf $OUT/a
