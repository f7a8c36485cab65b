#!/usr/bin/env bash
# Call F1: FlashAttention-4's first part stashed; every GPU test binary of the bundle.
set -u
root="$(pwd)"
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
cd dist/flashlab-gpu && ./unpack.sh
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/gpu.txt
./flashlab list > $OUT/list.txt 2>&1
start=$(date +%s)
timeout -k 10 500 ./run-tests.sh > $OUT/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result" $OUT/gpu-tests.txt | paste - - | sed -E 's/test result: //; s/; 0 measured.*//' | cut -c1-120
grep -E "FAILED|panicked|ignored," $OUT/gpu-tests.txt | grep -v " 0 ignored" | head
