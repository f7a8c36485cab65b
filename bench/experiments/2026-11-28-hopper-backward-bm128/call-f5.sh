#!/usr/bin/env bash
# Call F5, the backward's run of record: the bench of stages 22 and 23 at d64 and d128,
# seqlen 4096 to 16384, causal and not, with SDPA's flash (FlashAttention-2), cuDNN and
# efficient backward and FlashAttention-4's Hopper backward in the same run; single runs of
# both stages with and without the deterministic order.
set -u
root="$(pwd)"
. /tmp/fa4/env.sh
mkdir -p $OUT/f5/timelines
cd dist/flashlab-gpu && ./unpack.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/f5/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/f5/gpu.txt
timeout -k 10 330 ./flashlab bench --backward --stages 22,23 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 --baselines --plots --out $OUT/f5/bench > $OUT/f5/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\||^####|failed" $OUT/f5/bench.txt | cut -c1-170
for n in 22 23; do for c in "" "--causal"; do for det in "" "--deterministic"; do
  f=$OUT/f5/run-$n$(echo $c$det | tr -d ' -').txt
  timeout -k 5 60 ./flashlab stage $n --batch 1 --heads 16 --seqlen 8192 --dim 128 $c $det > $f 2>&1
  echo "stage $n $c $det: $(grep -E 'speed' $f | cut -c1-40)"
done; done; done
cd $root
tar czf $OUT/f5.tgz -C $OUT f5 && rm -rf $OUT/f5
