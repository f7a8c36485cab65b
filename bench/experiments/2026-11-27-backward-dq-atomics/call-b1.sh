#!/usr/bin/env bash
# Call B1: stage 22 (the backward on mma.sync) on the GPU: its GPU tests, the sanitizer,
# single runs at seqlen 4096 and 8192 (atomics and the deterministic order).
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/b1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/b1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/b1/gpu.txt
start=$(date +%s)
timeout -k 10 240 ./tests/stage22-backward-gpu > $OUT/b1/gpu-tests.txt 2>&1
echo "stage 22 tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^test |test result" $OUT/b1/gpu-tests.txt | cut -c1-150
grep -E "panicked|max\|err" $OUT/b1/gpu-tests.txt | head -8 | cut -c1-400
timeout -k 10 120 ./sanitize.sh 22 > $OUT/b1/sanitize22.txt 2>&1
echo "sanitize 22 exit $?: $(tail -n 1 $OUT/b1/sanitize22.txt)"
for args in "--seqlen 4096 --dim 128" "--seqlen 4096 --dim 128 --causal" "--seqlen 4096 --dim 128 --deterministic" "--seqlen 4096 --dim 128 --causal --deterministic" "--seqlen 8192 --dim 64" "--seqlen 8192 --dim 128"; do
  f=$OUT/b1/run-$(echo $args | tr -d ' -').txt
  timeout -k 5 90 ./flashlab stage 22 --batch 1 --heads 16 $args > $f 2>&1
  echo "stage 22 $args: exit $? $(grep -E 'check|speed' $f | cut -c1-90 | tr '\n' '|')"
done
tar czf $OUT/b1.tgz -C $OUT b1 && rm -rf $OUT/b1
