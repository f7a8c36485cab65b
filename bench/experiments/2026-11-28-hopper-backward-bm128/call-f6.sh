#!/usr/bin/env bash
# Call F6 (the same machine): stage 24, an experiment (stage 23 with 128 query rows a step at
# d64, branch exp-bm128), beside stage 23, alternating; the dQ-atomics experiment's last
# comparison (run3.sh); stage 23's measured timeline, causal and not.
set -u
root="$(pwd)"
mkdir -p $OUT/f6/timelines
cd dist/flashlab-gpu && ./unpack.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/f6/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/f6/gpu.txt
for d in 64 128; do for c in "" "--causal"; do for n in 23 24 23 24; do
  f=$OUT/f6/var-$n-d$d$(echo $c | tr -d ' -').txt
  timeout -k 5 60 ./flashlab stage $n --batch 1 --heads 16 --seqlen 8192 --dim $d $c --no-check >> $f 2>&1
done; echo "d$d $c: 23 $(grep -E 'speed' $OUT/f6/var-23-d$d$(echo $c | tr -d ' -').txt | cut -c10-24 | tr '\n' ' ') 24 $(grep -E 'speed|FAIL' $OUT/f6/var-24-d$d$(echo $c | tr -d ' -').txt | cut -c10-24 | tr '\n' ' ')"; done; done
cd $root
timeout -k 10 150 bash bench/experiments/2026-11-27-backward-dq-atomics/run3.sh $OUT/f6/dq-atomics > $OUT/f6/dq-atomics.txt 2>&1
echo "run3 exit $?"; grep -E "^==|check|^d" $OUT/f6/dq-atomics.txt | cut -c1-140 | head -40
cd dist/flashlab-gpu
for c in "" "--causal"; do
  timeout -k 5 60 ./flashlab timeline 23 --batch 1 --heads 16 --seqlen 8192 --dim 128 $c --blocks 2 --out $OUT/f6/timelines/timeline-23$(echo $c | tr -d ' -').svg --json $OUT/f6/timelines/timeline-23$(echo $c | tr -d ' -').json > $OUT/f6/timelines/timeline-23$(echo $c | tr -d ' -').txt 2>&1
  echo "timeline 23 $c exit $?: $(grep -E 'check|overhead' $OUT/f6/timelines/timeline-23$(echo $c | tr -d ' -').txt | head -3 | cut -c1-100 | tr '\n' '|')"
done
cd $root
tar czf $OUT/f6.tgz -C $OUT f6 && rm -rf $OUT/f6
