#!/usr/bin/env bash
# Session 10, call D: stage 23 at head dim 128 with the next step's S^T = K Q^T issued with
# this step's dQ and dK (.bundle/varA), beside the bundle of 0b3f6c7 (.bundle/base, its
# CLI): the variant's stage 23 GPU tests and sanitizer, its timeline at d128 seqlen 8192
# and causal 16384; flashlab stage 23 of each, in turn, twice, at d128's six shapes of the
# run of record (d64 is unchanged).
set -u
root="$(pwd)"
base=$root/.bundle/base var=$root/.bundle/varA
for d in $base $var; do (cd $d && ./unpack.sh > /dev/null); done
mkdir -p $OUT/d
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/d/gpu.txt
cd $var
timeout -k 10 120 ./tests/stage23-hopper-backward-gpu --include-ignored --test-threads=1 > $OUT/d/test-var23.txt 2>&1
echo "var tests 23 exit $?: $(grep 'test result' $OUT/d/test-var23.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/d/test-var23.txt | head -4 | cut -c1-300
timeout -k 10 120 ./sanitize.sh 23 > $OUT/d/sanitize-var23.txt 2>&1
echo "var sanitize 23 exit $?: $(tail -n 1 $OUT/d/sanitize-var23.txt)"
for c in "--causal --seqlen 16384" "--seqlen 8192"; do
  f=timeline-var23$(echo $c | tr -d ' -')
  timeout -k 5 60 ./flashlab timeline 23 --batch 1 --heads 16 --dim 128 $c --blocks 2 --out $OUT/d/$f.svg > $OUT/d/$f.txt 2>&1
  echo "timeline $c exit $?"; grep -E "MMA|producer|writer|time " $OUT/d/$f.txt
done
for round in 1 2; do for c in "" --causal; do for s in 4096 8192 16384; do
  for who in base var; do
    dir=$base; [ $who = var ] && dir=$var
    r=$(cd $dir && timeout -k 5 60 ./flashlab stage 23 --batch 1 --heads 16 --seqlen $s --dim 128 $c --no-check 2>&1 | grep -E "^speed" | awk '{print $2}')
    echo "round $round d128 $c s$s $who $r" >> $OUT/d/times.txt
  done
done; done; done
python3 $root/.bundle/ab.py $OUT/d/times.txt base var | tee $OUT/d/summary.txt
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/d/gpu.txt
cd $root
tar czf $OUT/d.tgz -C $OUT d && rm -rf $OUT/d
