#!/usr/bin/env bash
# Session 8, call F: stage 25 (the backward's warp tiles): its GPU tests, sanitize.sh 25,
# and the backward bench of stages 22 and 25 beside FlashAttention-2 (SDPA flash) and cuDNN
# in the same run; single runs with and without the deterministic order.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/f
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/f/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/f/gpu.txt
start=$(date +%s)
timeout -k 10 150 tests/stage25-backward-warp-tiles-gpu --include-ignored --test-threads=1 > $OUT/f/tests-25.txt 2>&1
echo "tests 25 exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/f/tests-25.txt | cut -c1-90)"
grep -E "panicked|FAIL|failed" $OUT/f/tests-25.txt | head -8 | cut -c1-300
start=$(date +%s)
timeout -k 10 120 ./sanitize.sh 25 > $OUT/f/sanitize25.txt 2>&1
echo "sanitize 25 exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/f/sanitize25.txt)"
start=$(date +%s)
timeout -k 10 330 ./flashlab bench --backward --stages 22,25 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 --baselines --plots --out $OUT/f/bench > $OUT/f/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"; grep -E "^\| [0-9]|^####|speed of light" $OUT/f/bench.txt | cut -c1-170 | head -40
for n in 22 25; do for c in "" --causal; do for det in "" --deterministic; do
  timeout -k 10 60 ./flashlab stage $n --batch 1 --heads 16 --seqlen 8192 --dim 128 $c $det --no-check > $OUT/f/run-$n$c$det.txt 2>&1
  echo "stage $n $c $det: $(grep -iE 'TFLOP' $OUT/f/run-$n$c$det.txt | tail -n 1 | cut -c1-150)"
done; done; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/f/gpu.txt
cd $root
tar czf $OUT/f.tgz -C $OUT f && rm -rf $OUT/f
