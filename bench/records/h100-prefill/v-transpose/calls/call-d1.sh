#!/usr/bin/env bash
# Call D1: every GPU test binary of the bundle (stages 1-24 and flashlab timeline) on the
# session's last kernels and harness.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/d1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/d1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/d1/gpu.txt
./flashlab list > $OUT/d1/list.txt 2>&1
timeout -k 10 520 ./run-tests.sh > $OUT/d1/gpu-tests.txt 2>&1
echo "run-tests exit $?"
grep -E "^== |test result|panicked|FAILED|failed:" $OUT/d1/gpu-tests.txt | grep -v "^== " | sort | uniq -c | sort -rn | head -20
grep -B1 -E "test result" $OUT/d1/gpu-tests.txt | grep "^== " | wc -l
grep -E "FAILED|panicked" $OUT/d1/gpu-tests.txt | head -10 | cut -c1-300
cd $root
tar czf $OUT/d1.tgz -C $OUT d1 && rm -rf $OUT/d1
