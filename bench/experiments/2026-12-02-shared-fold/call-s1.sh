#!/usr/bin/env bash
# Call S1 (a fresh H200, carrying dist/x1: flashlab and the GPU test binaries of stages 28
# and 29 from the working tree of stage 29's first build; dist/cudnn-frontend): stage 29's
# tests and sanitizer; stages 28 and 29 beside cuDNN's FP8 attention; the pair again in the
# other order; stage 29's timeline at d128.
set -u
root=$(pwd)
mkdir -p $OUT/s1
(cd dist/x1 && ./unpack.sh) || exit 1
F=dist/x1/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/s1/gpu.txt
timeout -k 10 150 dist/x1/tests/stage29-shared-fold-gpu --include-ignored --test-threads=1 > $OUT/s1/tests-29.txt 2>&1
echo "stage 29 tests exit $?: $(grep 'test result' $OUT/s1/tests-29.txt | cut -c1-80)"
grep -E "panicked|FAILED|error" $OUT/s1/tests-29.txt | head -6 | cut -c1-300
start=$(date +%s)
timeout -k 10 200 dist/x1/sanitize.sh 29 > $OUT/s1/sanitize-29.txt 2>&1
echo "sanitize 29 exit $? in $(( $(date +%s) - start )) s: $(tail -1 $OUT/s1/sanitize-29.txt | cut -c1-100)"
grep -E "ERROR|error" $OUT/s1/sanitize-29.txt | head -4 | cut -c1-200
show() { grep -E "TFLOPS" $1 | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-110; }
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/s1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8 timeout -k 10 200 $F bench --stages 28,29 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --out $OUT/s1/bench > $OUT/s1/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"; show $OUT/s1/bench.txt
start=$(date +%s)
timeout -k 10 90 $F bench --stages 29,28 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/s1/bench-r > $OUT/s1/bench-r.txt 2>&1
echo "bench reversed exit $? in $(( $(date +%s) - start )) s"; show $OUT/s1/bench-r.txt
timeout -k 5 40 $F timeline 29 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/s1/timeline-29-d128.svg --json $OUT/s1/timeline-29-d128.json > $OUT/s1/timeline-29-d128.txt 2>&1
echo "timeline 29 d128 exit $?"; head -30 $OUT/s1/timeline-29-d128.txt | cut -c1-140
cd $OUT && tar czf s1.tgz s1 && rm -rf s1
