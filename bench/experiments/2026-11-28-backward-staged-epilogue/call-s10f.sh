#!/usr/bin/env bash
# Session 10, call F: stage 23 with its epilogue addressed through tile_offset_swizzled
# (.bundle/varF) beside the bundle of 0b3f6c7 (.bundle/base, its CLI): the variant's stage 23
# GPU tests, timeline tests and sanitizer; flashlab stage 23 of each, in turn, twice, at
# d64 and d128, seqlen 4096 (where the epilogue weighs most), causal and not.
set -u
root="$(pwd)"
base=$root/.bundle/base var=$root/.bundle/varF
for d in $base $var; do (cd $d && ./unpack.sh > /dev/null); done
mkdir -p $OUT/f
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/f/gpu.txt
cd $var
timeout -k 10 120 ./tests/stage23-hopper-backward-gpu --include-ignored --test-threads=1 > $OUT/f/test-var23.txt 2>&1
echo "var tests 23 exit $?: $(grep 'test result' $OUT/f/test-var23.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/f/test-var23.txt | head -4 | cut -c1-300
timeout -k 10 150 ./tests/flashlab-timeline --include-ignored --test-threads=1 > $OUT/f/test-var-timeline.txt 2>&1
echo "var timeline tests exit $?: $(grep 'test result' $OUT/f/test-var-timeline.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/f/test-var-timeline.txt | head -4 | cut -c1-300
timeout -k 10 120 ./sanitize.sh 23 > $OUT/f/sanitize-var23.txt 2>&1
echo "var sanitize 23 exit $?: $(tail -n 1 $OUT/f/sanitize-var23.txt)"
for round in 1 2; do for d in 128 64; do for c in "" --causal; do for s in 4096; do
  for who in base var; do
    dir=$base; [ $who = var ] && dir=$var
    r=$(cd $dir && timeout -k 5 60 ./flashlab stage 23 --batch 1 --heads 16 --seqlen $s --dim $d $c --no-check 2>&1 | grep -E "^speed" | awk '{print $2}')
    echo "round $round d$d $c s$s $who $r" >> $OUT/f/times.txt
  done
done; done; done; done
python3 $root/.bundle/ab.py $OUT/f/times.txt base var | tee $OUT/f/summary.txt
cd $root
tar czf $OUT/f.tgz -C $OUT f && rm -rf $OUT/f
