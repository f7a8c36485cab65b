#!/usr/bin/env bash
# Session 10, call R7 (after R6 on the same machine, FlashAttention-4 installed): the bench of
# stage 23 with the baselines twice more, at the run of record's 12 shapes, to see which of
# its standings against cuDNN hold from run to run.
set -u
root="$(pwd)"
. /tmp/fa4/env.sh
mkdir -p $OUT/r6
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/r6/gpu.txt
for run in 2 3; do
  start=$(date +%s)
  timeout -k 10 280 ./flashlab bench --backward --stages 23 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 --baselines --out $OUT/r6/bench-$run > $OUT/r6/bench-$run.txt 2>&1
  echo "bench $run exit $? in $(( $(date +%s) - start )) s"; grep -E "^\| [0-9]|^####" $OUT/r6/bench-$run.txt | cut -c1-170
done
cd $root
tar czf $OUT/r6.tgz -C $OUT r6 && rm -rf $OUT/r6
