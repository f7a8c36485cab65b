#!/usr/bin/env bash
# Call Q1: stage 11's two wgmma probes through harness::testing::run_probe (the shared
# probe runner), and the other probes and the timeline test beside them.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/q1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/q1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/q1/gpu.txt
for t in stage11-wgmma-wgmma_fp8_probe stage11-wgmma-wgmma_probe stage10-tma-tma_probe stage03-tensor-cores-fragments flashlab-timeline; do
  timeout -k 10 120 tests/$t --include-ignored --test-threads=1 > $OUT/q1/$t.txt 2>&1
  echo "$t exit $?: $(grep -E 'test result' $OUT/q1/$t.txt | tail -1)"
  grep -E "FAILED|panicked" $OUT/q1/$t.txt | head -4
done
tar czf $OUT/q1.tgz -C $OUT q1 && rm -rf $OUT/q1
