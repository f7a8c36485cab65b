#!/usr/bin/env bash
# Session 8, the last call: every GPU test binary of the bundle (all stages).
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/z
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/z/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/z/gpu.txt
start=$(date +%s)
timeout -k 10 400 ./run-tests.sh > $OUT/z/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^test result|binaries failed|FAILED|panicked" $OUT/z/gpu-tests.txt | sort | uniq -c | sort -rn | head -20
cd $root
tar czf $OUT/z.tgz -C $OUT z && rm -rf $OUT/z
