#!/usr/bin/env bash
# Call A1: stage 24 (persistent) first light: one run, the bench of 19 and 24 (no
# baselines), the GPU tests of 24 (both grids), 13 and 19 (the shared headers changed),
# and timelines.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/a1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/a1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/a1/gpu.txt
for c in "" "--causal"; do
  timeout -k 5 40 ./flashlab stage 24 --batch 1 --heads 16 --seqlen 8192 --dim 128 $c > $OUT/a1/run24$c.txt 2>&1
  echo "stage 24 $c exit $?: $(grep -E 'check|speed|error' $OUT/a1/run24$c.txt | head -3 | cut -c1-90 | tr '\n' '|')"
done
timeout -k 10 240 ./flashlab bench --stages 19,24 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --heads 16 --out $OUT/a1/bench > $OUT/a1/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\||^####|failed" $OUT/a1/bench.txt | cut -c1-120
for t in stage24-persistent-gpu stage24-persistent-walk stage19-lazy-rescale-gpu stage13-ping-pong-gpu; do
  timeout -k 10 120 ./tests/$t > $OUT/a1/test-$t.txt 2>&1
  echo "$t exit $?: $(grep 'test result' $OUT/a1/test-$t.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/a1/test-$t.txt | head -4 | cut -c1-300
done
mkdir -p $OUT/a1/timelines
for c in "" "--causal"; do
  n=timeline-24$(echo $c | tr -d ' -')
  timeout -k 5 60 ./flashlab timeline 24 --batch 1 --heads 16 --seqlen 8192 --dim 128 $c --blocks 2 --out $OUT/a1/timelines/$n.svg --json $OUT/a1/timelines/$n.json > $OUT/a1/timelines/$n.txt 2>&1
  echo "timeline 24 $c exit $?: $(grep -E 'check|overhead|cut' $OUT/a1/timelines/$n.txt | head -3 | cut -c1-100 | tr '\n' '|')"
done
cd $root
tar czf $OUT/a1.tgz -C $OUT a1 && rm -rf $OUT/a1
