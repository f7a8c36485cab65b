#!/usr/bin/env bash
# Call F1 (a fresh H200, carrying dist/x28: the flashlab of this tree and stage 28's GPU test
# binary; dist/cudnn-frontend): stage 28's GPU tests and sanitizer, memcheck and racecheck
# at d256 on the sanitizer's small problem; the bench of record of stages 26, 27 and 28 at
# d64 and d128 beside cuDNN's FP8 attention (and PyTorch's answer to e4m3); the timelines
# of stages 27 and 28 at d64 and d128, seqlen 8192; then 27 and 28 again in the other order.
set -u
root=$(pwd)
mkdir -p $OUT/f1
(cd dist/x28 && ./unpack.sh) || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/f1/gpu.txt
cd dist/x28
timeout -k 10 90 tests/stage28-three-consumers-gpu --include-ignored --test-threads=1 > $OUT/f1/tests-28.txt 2>&1
echo "stage 28 tests exit $?: $(grep 'test result' $OUT/f1/tests-28.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/f1/tests-28.txt | head -4 | cut -c1-240
start=$(date +%s)
timeout -k 10 150 ./sanitize.sh 28 > $OUT/f1/sanitize28.txt 2>&1
echo "sanitize 28 exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/f1/sanitize28.txt)"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout -k 10 60 $SAN --tool $tool --error-exitcode 3 ./flashlab stage 28 --dim 256 --causal --batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --no-time > $OUT/f1/$tool-28-d256.txt 2>&1
  echo "$tool 28 d256 exit $?: $(tail -n 1 $OUT/f1/$tool-28-d256.txt)"
done
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/f1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8,sdpa-fp8 timeout -k 10 230 ./flashlab bench --stages 26,27,28 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $OUT/f1/bench > $OUT/f1/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| [0-9]|^####" $OUT/f1/bench.txt | cut -c1-200 | head -40
for s in 27 28; do for d in 64 128; do
  timeout -k 5 40 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim $d --blocks 2 --out $OUT/f1/timeline-$s-d$d.svg --json $OUT/f1/timeline-$s-d$d.json > $OUT/f1/timeline-$s-d$d.txt 2>&1
  echo "timeline $s d$d exit $?: $(grep -E 'softmax' $OUT/f1/timeline-$s-d$d.txt | head -1 | cut -c1-120)"
done; done
start=$(date +%s)
timeout -k 10 80 ./flashlab bench --stages 28,27 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/f1/repeat > $OUT/f1/repeat.txt 2>&1
echo "repeat exit $? in $(( $(date +%s) - start )) s"
grep -E "TFLOPS" $OUT/f1/repeat.txt | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-100
cd $OUT && tar czf f1.tgz f1 && rm -rf f1
