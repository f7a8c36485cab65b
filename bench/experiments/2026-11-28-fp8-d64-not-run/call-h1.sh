#!/usr/bin/env bash
# Call H1 (session 7): FP8 at head dim 64 (stages 20 and 21): their GPU tests (both head
# dims), the sanitizer, the refactored `flashlab timeline` test binary, and a bench of
# stages 19, 20, 21 at d64 and d128 with cuDNN's FP8 attention in the same run.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/h1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/h1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/h1/gpu.txt
for t in stage20-fp8-gpu stage21-incoherent-gpu stage24-v-transpose-gpu flashlab-timeline; do
  start=$(date +%s)
  timeout -k 10 200 tests/$t --include-ignored --test-threads=1 > $OUT/h1/tests-$t.txt 2>&1
  echo "$t exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/h1/tests-$t.txt | cut -c1-80)"
  grep -E "panicked|FAIL" $OUT/h1/tests-$t.txt | head -6 | cut -c1-300
done
for n in 20 21; do
  start=$(date +%s)
  timeout -k 10 120 ./sanitize.sh $n > $OUT/h1/sanitize$n.txt 2>&1
  echo "sanitize $n exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/h1/sanitize$n.txt)"
done
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/h1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=default,cudnn-fp8,sdpa-fp8 timeout -k 10 400 ./flashlab bench --stages 19,20,21 --seqlens 4096,8192,16384 --dims 64,128 --causal both --baselines --out $OUT/h1/bench > $OUT/h1/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"; grep -E "^\| [0-9]|^####|speed of light" $OUT/h1/bench.txt | cut -c1-170 | head -60
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/h1/gpu.txt
cd $root
tar czf $OUT/h1.tgz -C $OUT h1 && rm -rf $OUT/h1
