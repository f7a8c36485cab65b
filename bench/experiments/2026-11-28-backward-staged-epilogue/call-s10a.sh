#!/usr/bin/env bash
# Session 10, call A: stage 23 with dK and dV staged through shared memory (.bundle/varE) and
# with that and dQ issued before dK at head dim 128 (.bundle/varEQ), beside the bundle of
# 6332b7d (.bundle/base: the CLI of dist/flashlab-gpu, stage 23 as 444121f has it): varEQ's stage 23 GPU tests,
# timeline tests and sanitizer; then flashlab stage 23 of each, in turn, twice, at the run
# of record's 12 shapes.
set -u
root="$(pwd)"
base=$root/.bundle/base e=$root/.bundle/varE eq=$root/.bundle/varEQ
for d in $base $e $eq; do (cd $d && ./unpack.sh > /dev/null); done
mkdir -p $OUT/a
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/a/gpu.txt
cd $eq
timeout -k 10 120 ./tests/stage23-hopper-backward-gpu --include-ignored --test-threads=1 > $OUT/a/test-eq23.txt 2>&1
echo "eq tests 23 exit $?: $(grep 'test result' $OUT/a/test-eq23.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/a/test-eq23.txt | head -4 | cut -c1-300
timeout -k 10 150 ./tests/flashlab-timeline --include-ignored --test-threads=1 > $OUT/a/test-eq-timeline.txt 2>&1
echo "eq timeline tests exit $?: $(grep 'test result' $OUT/a/test-eq-timeline.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/a/test-eq-timeline.txt | head -4 | cut -c1-300
timeout -k 10 120 ./sanitize.sh 23 > $OUT/a/sanitize-eq23.txt 2>&1
echo "eq sanitize 23 exit $?: $(tail -n 1 $OUT/a/sanitize-eq23.txt)"
for round in 1 2; do for d in 128 64; do for c in "" --causal; do for s in 4096 8192 16384; do
  for who in base e eq; do
    dir=$base; [ $who = e ] && dir=$e; [ $who = eq ] && dir=$eq
    r=$(cd $dir && timeout -k 5 60 ./flashlab stage 23 --batch 1 --heads 16 --seqlen $s --dim $d $c --no-check 2>&1 | grep -E "^speed" | awk '{print $2}')
    echo "round $round d$d $c s$s $who $r" >> $OUT/a/times.txt
  done
done; done; done; done
python3 $root/.bundle/ab.py $OUT/a/times.txt base e eq | tee $OUT/a/summary.txt
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/a/gpu.txt
cd $root
tar czf $OUT/a.tgz -C $OUT a && rm -rf $OUT/a
