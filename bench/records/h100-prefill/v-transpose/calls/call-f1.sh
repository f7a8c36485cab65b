#!/usr/bin/env bash
# Call F1: every GPU test binary of the session's final bundle; then Nsight Compute on the
# FP8 preparation kernels of stages 20 and 21 at seqlen 8192 (how far from the memory
# bandwidth they run, and why).
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/f1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/f1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/f1/gpu.txt
timeout -k 10 300 ./run-tests.sh > $OUT/f1/gpu-tests.txt 2>&1
echo "run-tests exit $?: $(grep 'failed:' $OUT/f1/gpu-tests.txt)"
grep -E "test result" $OUT/f1/gpu-tests.txt | awk '{s+=$4; f+=$6; i+=$8} END {print "passed", s, "failed", f, "ignored", i}'
echo "binaries: $(grep -c '^== ' $OUT/f1/gpu-tests.txt)"
grep -E "FAILED|panicked" $OUT/f1/gpu-tests.txt | head -6 | cut -c1-300
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for n in 20 21; do
  timeout -k 10 100 $NCU --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats -k regex:"(amax|quantize)_bf16" -c 2 ./flashlab stage $n --batch 1 --heads 16 --seqlen 8192 --dim 128 --no-time --no-check > $OUT/f1/ncu-prep-$n.txt 2>&1
  echo "ncu prep $n exit $?"; grep -E "^  [a-z_0-9]+_bf16|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Warp Cycles Per Issued|Registers Per|Block Limit" $OUT/f1/ncu-prep-$n.txt | tr -s ' ' | cut -c1-100
done
cd $root
tar czf $OUT/f1.tgz -C $OUT f1 && rm -rf $OUT/f1
