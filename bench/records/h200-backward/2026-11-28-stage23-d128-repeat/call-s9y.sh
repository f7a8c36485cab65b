#!/usr/bin/env bash
# Session 9, call Y: the bench of stage 23 at d128 beside cuDNN (and SDPA's other backward
# kernels; FlashAttention-4 not installed), twice in one call, to see how stable the three
# shapes where the run of record has stage 23 behind cuDNN are.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/y
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/y/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/y/gpu.txt
for round in 1 2; do
  start=$(date +%s)
  timeout -k 10 200 ./flashlab bench --backward --stages 23 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --heads 16 --baselines --out $OUT/y/bench-$round > $OUT/y/bench-$round.txt 2>&1
  echo "bench $round exit $? in $(( $(date +%s) - start )) s"; grep -E "^\| [0-9]|^####" $OUT/y/bench-$round.txt | cut -c1-150
done
cd $root
tar czf $OUT/y.tgz -C $OUT y && rm -rf $OUT/y
