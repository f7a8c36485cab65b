#!/usr/bin/env bash
# Session 10, call R5, the backward's run of record on an H200: the bench of stages 22, 23
# and 25 at d64 and d128, seqlen 4096 to 16384, causal and not, with SDPA's flash
# (FlashAttention-2), cuDNN and efficient backward and FlashAttention-4's Hopper backward
# in the same run; stage 23's timelines at d128, seqlen 8192, causal and not; single runs
# of stages 23 and 25 with and without the deterministic order.
set -u
root="$(pwd)"
. /tmp/fa4/env.sh
mkdir -p $OUT/r5/timelines
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/r5/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/r5/gpu.txt
start=$(date +%s)
timeout -k 10 420 ./flashlab bench --backward --stages 22,23,25 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 --baselines --plots --out $OUT/r5/bench > $OUT/r5/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"; grep -E "^\||^####|failed" $OUT/r5/bench.txt | cut -c1-170
for c in "" "--causal"; do
  f=timeline-23$(echo $c | tr -d ' -')
  timeout -k 5 60 ./flashlab timeline 23 --batch 1 --heads 16 --seqlen 8192 --dim 128 $c --blocks 2 --out $OUT/r5/timelines/$f.svg --json $OUT/r5/timelines/$f.json > $OUT/r5/timelines/$f.txt 2>&1
  echo "timeline $c exit $?"; grep -E "MMA|producer|writer|time " $OUT/r5/timelines/$f.txt
done
for n in 23 25; do for c in "" "--causal"; do for det in "" "--deterministic"; do
  f=$OUT/r5/run-$n$(echo $c$det | tr -d ' -').txt
  timeout -k 5 60 ./flashlab stage $n --batch 1 --heads 16 --seqlen 8192 --dim 128 $c $det > $f 2>&1
  echo "stage $n $c $det: $(grep -iE 'TFLOP' $f | tail -n 1 | cut -c1-120)"
done; done; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/r5/gpu.txt
cd $root
tar czf $OUT/r5.tgz -C $OUT r5 && rm -rf $OUT/r5
