#!/usr/bin/env bash
# Call R1: FlashAttention-4's first part stashed; every GPU test binary of the bundle.
set -u
root="$(pwd)"
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/r1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/r1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/r1/gpu.txt
./flashlab list > $OUT/r1/list.txt 2>&1
start=$(date +%s)
timeout -k 10 480 ./run-tests.sh > $OUT/r1/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result" $OUT/r1/gpu-tests.txt | paste - - | sed -E 's/test result: //; s/; 0 measured.*//' | cut -c1-120
grep -E "FAILED|panicked" $OUT/r1/gpu-tests.txt | head
tar czf $OUT/r1.tgz -C $OUT r1 && rm -rf $OUT/r1
