#!/usr/bin/env bash
# Call D1 (a fresh machine, carrying dist/c28: the flashlab of this tree and stage 28's GPU
# test binary; dist/cudnn-frontend): stage 28's GPU tests and sanitizer, memcheck and
# racecheck at d256 on the sanitizer's small problem; its timeline at d128, seqlen 8192;
# then the bench of stages 20, 27 and 28 at d64 and d128 beside cuDNN's FP8 attention.
set -u
root=$(pwd)
mkdir -p $OUT/d1
(cd dist/c28 && ./unpack.sh) || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/d1/gpu.txt
cd dist/c28
timeout -k 10 90 tests/stage28-pv-halves-gpu --include-ignored --test-threads=1 > $OUT/d1/tests-28.txt 2>&1
echo "stage 28 tests exit $?: $(grep 'test result' $OUT/d1/tests-28.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/d1/tests-28.txt | head -4 | cut -c1-240
timeout -k 10 90 ./sanitize.sh 28 > $OUT/d1/sanitize28.txt 2>&1
echo "sanitize 28 exit $?: $(tail -n 1 $OUT/d1/sanitize28.txt)"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout -k 10 60 $SAN --tool $tool --error-exitcode 3 ./flashlab stage 28 --dim 256 --causal --batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --no-time > $OUT/d1/$tool-28-d256.txt 2>&1
  echo "$tool 28 d256 exit $?: $(tail -n 1 $OUT/d1/$tool-28-d256.txt)"
done
timeout -k 5 60 ./flashlab timeline 28 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/d1/timeline-28-d128.svg --json $OUT/d1/timeline-28-d128.json > $OUT/d1/timeline-28-d128.txt 2>&1
echo "timeline 28 d128 exit $?: $(grep -E 'softmax' $OUT/d1/timeline-28-d128.txt | head -1 | cut -c1-120)"
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/d1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8 timeout -k 10 240 ./flashlab bench --stages 20,27,28 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --out $OUT/d1/bench > $OUT/d1/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| [0-9]|^####" $OUT/d1/bench.txt | cut -c1-200 | head -40
cd $OUT && tar czf d1.tgz d1 && rm -rf d1
