#!/usr/bin/env bash
# Call C2 (a fresh H200, carrying dist/xd: flashlab and the GPU tests of stages 20, 21, 24, 27
# and 28 with the LSE bound that models S's sums in the tensor core): the seed of C1 replayed;
# every FP8 stage's GPU tests; one bench row, to see what the model costs the check.
set -u
mkdir -p $OUT/c2
(cd dist/xd && ./unpack.sh) || exit 1
F=dist/xd/flashlab
seed=10938290962580418363
shape=(--dim 256 --causal --batch 1 --heads 2 --seqlen-q 1 --seqlen-k 257 --no-time)
for s in 20 27 28; do
  for g in tensor head; do
    timeout -k 5 30 $F stage $s "${shape[@]}" --seed $seed --fp8-scales $g > $OUT/c2/replay-$s-$g.txt 2>&1
    echo "stage $s $g exit $?: $(grep -E '^check' $OUT/c2/replay-$s-$g.txt | cut -c1-170)"
  done
done
for t in stage20-fp8 stage21-incoherent stage24-v-transpose stage27-wide-keys stage28-three-consumers; do
  start=$(date +%s)
  timeout -k 10 240 dist/xd/tests/$t-gpu --include-ignored --test-threads=1 > $OUT/c2/tests-$t.txt 2>&1
  echo "$t tests exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/c2/tests-$t.txt | cut -c1-80)"
  grep -E "failed on" -A1 $OUT/c2/tests-$t.txt | head -4 | cut -c1-260
done
start=$(date +%s)
timeout -k 10 100 $F bench --stages 28 --seqlens 4096,16384 --dims 128 --causal off --tokens 1 --out $OUT/c2/bench > $OUT/c2/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"; grep TFLOPS $OUT/c2/bench.txt | grep -v "of light" | cut -c1-100
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
