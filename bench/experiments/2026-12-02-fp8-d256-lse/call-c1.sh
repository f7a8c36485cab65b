#!/usr/bin/env bash
# Call C1 (a fresh H200, carrying dist/xc: flashlab and the GPU tests of stages 20 and 28 at
# 54d3c87): the d256 LSE check that failed once in the shared fold's call S2, replayed with
# its seed on every FP8 stage and both scale granularities; then stage 28's and stage 20's
# per-tensor d256 test twenty times each, fresh seeds, to count failures.
set -u
mkdir -p $OUT/c1
(cd dist/xc && ./unpack.sh) || exit 1
F=dist/xc/flashlab
seed=10938290962580418363
shape=(--dim 256 --causal --batch 1 --heads 2 --seqlen-q 1 --seqlen-k 257 --no-time)
for s in 20 21 24 27 28; do
  for g in tensor head; do
    for rep in 1 2; do
      timeout -k 5 30 $F stage $s "${shape[@]}" --seed $seed --fp8-scales $g > $OUT/c1/replay-$s-$g-$rep.txt 2>&1
      echo "stage $s $g run $rep exit $?: $(grep -E '^check' $OUT/c1/replay-$s-$g-$rep.txt | cut -c1-170)"
    done
  done
done
for t in stage28-three-consumers stage20-fp8; do
  fails=0
  for i in $(seq 1 20); do
    timeout -k 5 60 dist/xc/tests/$t-gpu --include-ignored --test-threads=1 --exact scales_per_tensor_d256 > $OUT/c1/$t-d256-$i.txt 2>&1 || { fails=$((fails+1)); grep -E "failed on" -A1 $OUT/c1/$t-d256-$i.txt | tail -1 | cut -c1-260; }
  done
  echo "$t scales_per_tensor_d256: $fails of 20 runs failed; $(grep -h 'test result' $OUT/c1/$t-d256-1.txt | cut -c1-60)"
done
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
