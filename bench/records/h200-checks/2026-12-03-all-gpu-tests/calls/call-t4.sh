#!/usr/bin/env bash
# Call T4 (a fresh H200, carrying dist/fp8: flashlab and the GPU tests of the FP8 stages
# 20, 21, 24, 27 and 28, built with the emulation's quantization in f32): T2's failed case
# replayed with its seed (and once with per-head scales), then every GPU test of the FP8
# stages, twice.
set -u
mkdir -p $OUT/t4
(cd dist/fp8 && ./unpack.sh) || exit 1
F=dist/fp8/flashlab
shape=(--batch 1 --heads 2 --seqlen-q 1 --seqlen-k 257 --causal --no-time --dim 64 --seed 15877803243449587777)
for sc in tensor head; do
  timeout -k 5 30 $F stage 20 "${shape[@]}" --fp8-scales $sc > $OUT/t4/replay-$sc.txt 2>&1
  echo "replay ($sc) exit $?"; grep -E "^check" $OUT/t4/replay-$sc.txt | cut -c1-200
done
for round in 1 2; do
  start=$(date +%s)
  timeout -k 10 240 bash dist/fp8/run-tests.sh > $OUT/t4/tests-$round.txt 2>&1
  echo "round $round: run-tests exit $? in $(( $(date +%s) - start )) s"
  grep -E "^== |test result:" $OUT/t4/tests-$round.txt | sed 's/finished in.*//' | paste - - | cut -c1-120
done
cd $OUT && tar czf t4.tgz t4 && rm -rf t4
