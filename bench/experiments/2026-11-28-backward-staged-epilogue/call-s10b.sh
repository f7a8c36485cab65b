#!/usr/bin/env bash
# Session 10, call B: stage 25 with dK and dV staged through shared memory (.bundle/varEQ)
# beside stage 25 as 444121f has it (.bundle/varE, whose stage 25 is unchanged): the
# variant's GPU tests and sanitizer, then flashlab stage 25 of each, in turn, twice, at the
# run of record's 12 shapes; a timeline of varEQ's stage 23 at the shape it trails cuDNN
# most (d128, causal, seqlen 16384) and at d128, seqlen 8192.
set -u
root="$(pwd)"
e=$root/.bundle/varE eq=$root/.bundle/varEQ
for d in $e $eq; do (cd $d && ./unpack.sh > /dev/null); done
mkdir -p $OUT/b
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/b/gpu.txt
cd $eq
timeout -k 10 150 ./tests/stage25-backward-warp-tiles-gpu --include-ignored --test-threads=1 > $OUT/b/test-eq25.txt 2>&1
echo "eq tests 25 exit $?: $(grep 'test result' $OUT/b/test-eq25.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/b/test-eq25.txt | head -4 | cut -c1-300
timeout -k 10 120 ./sanitize.sh 25 > $OUT/b/sanitize-eq25.txt 2>&1
echo "eq sanitize 25 exit $?: $(tail -n 1 $OUT/b/sanitize-eq25.txt)"
for c in "--causal --seqlen 16384" "--seqlen 8192"; do
  f=timeline-eq23$(echo $c | tr -d ' -')
  timeout -k 5 60 ./flashlab timeline 23 --batch 1 --heads 16 --dim 128 $c --blocks 2 --out $OUT/b/$f.svg --json $OUT/b/$f.json > $OUT/b/$f.txt 2>&1
  echo "timeline $c exit $?"; grep -E "MMA|producer|writer|time " $OUT/b/$f.txt
done
for round in 1 2; do for d in 128 64; do for c in "" --causal; do for s in 4096 8192 16384; do
  for who in e eq; do
    dir=$e; [ $who = eq ] && dir=$eq
    r=$(cd $dir && timeout -k 5 60 ./flashlab stage 25 --batch 1 --heads 16 --seqlen $s --dim $d $c --no-check 2>&1 | grep -E "^speed" | awk '{print $2}')
    echo "round $round d$d $c s$s $who $r" >> $OUT/b/times.txt
  done
done; done; done; done
python3 $root/.bundle/ab.py $OUT/b/times.txt e eq | tee $OUT/b/summary.txt
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/b/gpu.txt
cd $root
tar czf $OUT/b.tgz -C $OUT b && rm -rf $OUT/b
