#!/usr/bin/env bash
# Session 10, call C: stage 23 with 0 (b48b93d), 1, 2 or 3 of each 8 exponentials of P
# computed by a cubic on the FMA pipe (.bundle/pN: the CLI built with POLY_OF_8=N): each
# checked against the oracle at d128 and d64, causal and not, seqlen 1000; then flashlab
# stage 23 of each, in turn, twice, at the run of record's 12 shapes.
set -u
root="$(pwd)"
for v in 0 1 2 3; do (cd $root/.bundle/p$v && ./unpack.sh > /dev/null); done
mkdir -p $OUT/c
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/c/gpu.txt
for v in 1 2 3; do for d in 128 64; do for c in "" --causal; do
  f=$OUT/c/check-p$v-d$d$(echo $c | tr -d ' -').txt
  (cd $root/.bundle/p$v && timeout -k 5 60 ./flashlab stage 23 --batch 2 --heads 4 --kv-heads 2 --seqlen 1000 --dim $d $c --no-time > $f 2>&1)
  echo "p$v d$d $c check exit $?: $(grep -E '^check' $f | cut -c1-60)"
done; done; done
for round in 1 2; do for d in 128 64; do for c in "" --causal; do for s in 4096 8192 16384; do
  for v in 0 1 2 3; do
    r=$(cd $root/.bundle/p$v && timeout -k 5 60 ./flashlab stage 23 --batch 1 --heads 16 --seqlen $s --dim $d $c --no-check 2>&1 | grep -E "^speed" | awk '{print $2}')
    echo "round $round d$d $c s$s p$v $r" >> $OUT/c/times.txt
  done
done; done; done; done
python3 $root/.bundle/ab.py $OUT/c/times.txt p0 p1 p2 p3 | tee $OUT/c/summary.txt
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/c/gpu.txt
cd $root
tar czf $OUT/c.tgz -C $OUT c && rm -rf $OUT/c
