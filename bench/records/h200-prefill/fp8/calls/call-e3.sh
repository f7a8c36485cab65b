#!/usr/bin/env bash
# Call E3: stages 20 and 21 (tests, sanitizer, timeline test binary), accuracy on the GPU
# (stages 19, 20, 21 on FlashAttention-3's inputs), and a bench of stages 19, 20, 21 with two
# uncommitted variants of stage 20: 22 = three ring slots, 23 = no fold (P V accumulated in
# the FP8 wgmma's own accumulator across tiles, as call E1's kernel); with the baselines,
# cuDNN's FP8 attention (the cuDNN frontend's wheel) and SDPA on e4m3 among them.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/e3
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e3/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/e3/gpu.txt
for t in stage20-fp8-gpu stage21-incoherent-gpu flashlab-timeline; do
  start=$(date +%s)
  timeout -k 10 240 tests/$t --include-ignored --test-threads=1 > $OUT/e3/tests-$t.txt 2>&1
  echo "$t exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/e3/tests-$t.txt | cut -c1-80)"
  grep -E "panicked|FAIL" $OUT/e3/tests-$t.txt | head -10 | cut -c1-300
done
for n in 20 21; do
  start=$(date +%s)
  timeout -k 10 150 ./sanitize.sh $n > $OUT/e3/sanitize$n.txt 2>&1
  echo "sanitize $n exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/e3/sanitize$n.txt)"
done
for s in 1024 4096; do
  timeout -k 10 200 ./flashlab accuracy --seqlen $s --stages 19,20,21 --json $OUT/e3/accuracy-$s.json > $OUT/e3/accuracy-$s.txt 2>&1
  echo "accuracy $s exit $?"; grep -E "^\|" $OUT/e3/accuracy-$s.txt
done
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/e3/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?: $(tail -n 2 $OUT/e3/cudnn-fe-install.txt | tr '\n' '|')"
. /tmp/cudnn-fe/env.sh
FLASHLAB_BASELINES_BACKENDS=default,cudnn-fp8,sdpa-fp8 timeout -k 10 420 ./flashlab bench --stages 19,20,21,22,23 --seqlens 4096,8192,16384 --dims 128 --causal both --baselines --out $OUT/e3/bench > $OUT/e3/bench.txt 2>&1
echo "bench exit $?"; grep -vE "^\s*$" $OUT/e3/bench.txt | tail -40 | cut -c1-160
tar czf $OUT/e3.tgz -C $OUT e3 && rm -rf $OUT/e3
