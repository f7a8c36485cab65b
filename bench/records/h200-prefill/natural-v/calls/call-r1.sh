#!/usr/bin/env bash
# Call R1 (an H200, carrying dist/xr: flashlab and stage 31's GPU test binary, built at the
# commit this record names; and dist/cudnn-frontend): stage 31's GPU tests, racecheck and
# memcheck on 1100 keys, sanitize.sh 31; stages 28, 30 and 31 at d128, seqlen 4096-16384,
# causal and not, beside cuDNN's FP8 attention (and PyTorch's answer to e4m3) in the same
# run; stage 31's timeline.
set -u
mkdir -p $OUT/r1
(cd dist/xr && ./unpack.sh) || exit 1
F=dist/xr/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/r1/gpu.txt
start=$(date +%s)
timeout -k 10 150 dist/xr/tests/stage31-natural-v-gpu > $OUT/r1/tests-31.txt 2>&1
echo "tests exit $? in $(( $(date +%s) - start )) s"; grep -E "test result|FAILED|panicked" $OUT/r1/tests-31.txt | head -5 | cut -c1-200
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  timeout -k 10 90 $S --tool $tool --error-exitcode 1 $F stage 31 --batch 1 --heads 2 --seqlen-q 300 --seqlen-k 1100 --dim 128 --no-time > $OUT/r1/$tool-31-long.txt 2>&1
  echo "$tool 31 long exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/r1/$tool-31-long.txt
done
start=$(date +%s)
timeout -k 10 150 bash dist/xr/sanitize.sh 31 > $OUT/r1/sanitize31.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/r1/sanitize31.txt)"
bash dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/r1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8,sdpa-fp8 timeout -k 10 240 $F bench --stages 28,30,31 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --baselines --out $OUT/r1/bench1 > $OUT/r1/bench1.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| [0-9]|^####" $OUT/r1/bench1.txt | cut -c1-220 | head -20
timeout -k 5 60 $F timeline 31 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/r1/timeline-31.svg --json $OUT/r1/timeline-31.json > $OUT/r1/timeline-31.txt 2>&1
echo "timeline exit $?"; grep -E "consumer|producer" $OUT/r1/timeline-31.txt | cut -c1-100
cd $OUT && tar czf r1.tgz r1 && rm -rf r1
