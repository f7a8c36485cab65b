#!/usr/bin/env bash
# Call C1 (a fresh machine, carrying dist/c27: the flashlab of this tree and stage 27's GPU
# test binary; dist/cudnn-frontend; dist/fw/o160 from the fp8-wide-keys experiment): stage
# 27's GPU tests and sanitizer; the timelines of stages 20 and 27 at d64, seqlen 8192; the
# bench of stages 19, 20 and 27 at d64 and d128 beside cuDNN's FP8 attention; then the
# experiment's 160-key build at d128 beside stage 20, in opposite orders.
set -u
root=$(pwd)
mkdir -p $OUT/c1
(cd dist/c27 && ./unpack.sh) || exit 1
(cd dist/fw/o160 && ./unpack.sh) || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/c1/gpu.txt
cd dist/c27
timeout -k 10 90 tests/stage27-wide-keys-gpu --include-ignored --test-threads=1 > $OUT/c1/tests-27.txt 2>&1
echo "stage 27 tests exit $?: $(grep 'test result' $OUT/c1/tests-27.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/c1/tests-27.txt | head -4 | cut -c1-240
start=$(date +%s)
timeout -k 10 150 ./sanitize.sh 27 > $OUT/c1/sanitize27.txt 2>&1
echo "sanitize 27 exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/c1/sanitize27.txt)"
for s in 20 27; do
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim 64 --blocks 2 --out $OUT/c1/timeline-$s-d64.svg --json $OUT/c1/timeline-$s-d64.json > $OUT/c1/timeline-$s-d64.txt 2>&1
  echo "timeline $s d64 exit $?: $(grep -E 'softmax' $OUT/c1/timeline-$s-d64.txt | head -1 | cut -c1-120)"
done
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/c1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8,sdpa-fp8 timeout -k 10 300 ./flashlab bench --stages 19,20,27 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --out $OUT/c1/bench > $OUT/c1/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| [0-9]|^####" $OUT/c1/bench.txt | cut -c1-200 | head -40
cd $root
for b in c27 o160 o160 c27; do
  start=$(date +%s); bin=dist/c27/flashlab; [ $b = o160 ] && bin=dist/fw/o160/flashlab
  timeout -k 10 90 $bin bench --stages 20 --seqlens 8192,16384 --dims 128 --causal both --tokens 1 --out $OUT/c1/o160-$b-$start > $OUT/c1/o160-$b-$start.txt 2>&1
  echo "d128 bench of $b's stage 20 exit $? in $(( $(date +%s) - start )) s"
  grep -E "TFLOPS" $OUT/c1/o160-$b-$start.txt | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-100
done
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
