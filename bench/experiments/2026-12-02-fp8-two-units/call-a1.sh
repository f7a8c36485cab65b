#!/usr/bin/env bash
# Call A1 (a fresh machine, carrying dist/pe from build.sh): the 2-of-8 build's
# stage 20
# GPU tests; the base and 2-of-8 timelines at d128 and d64, seqlen 8192 (softmax time and
# overlap); then stage 20 of each build in two rounds of opposite order at d64 and d128,
# seqlen 8192 and 16384, causal and not (8 shapes, about 30 s a bench).
set -u
root=$(pwd)
mkdir -p $OUT/pe
for d in base p1 p2 p3; do (cd dist/pe/$d && ./unpack.sh) || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/pe/gpu.txt
for b in p1 p2 p3; do
  [ -x dist/pe/$b/tests/stage20-fp8-gpu ] || continue
  cd dist/pe/$b
  timeout -k 10 150 tests/stage20-fp8-gpu --include-ignored --test-threads=1 > $OUT/pe/tests-$b.txt 2>&1
  echo "$b stage 20 tests exit $?: $(grep 'test result' $OUT/pe/tests-$b.txt | cut -c1-80)"
  cd $root
done
for b in base p2; do
  for d in 128 64; do
    timeout -k 5 60 dist/pe/$b/flashlab timeline 20 --batch 1 --heads 16 --seqlen 8192 --dim $d --blocks 2 --out $OUT/pe/timeline-$b-d$d.svg --json $OUT/pe/timeline-$b-d$d.json > $OUT/pe/timeline-$b-d$d.txt 2>&1
    echo "$b timeline d$d exit $?: $(grep -E 'softmax' $OUT/pe/timeline-$b-d$d.txt | head -1 | cut -c1-160)"
  done
done
for round in 1 2; do
  order="base p1 p2 p3"; [ $round = 2 ] && order="p3 p2 p1 base"
  for b in $order; do
    start=$(date +%s)
    timeout -k 10 120 dist/pe/$b/flashlab bench --stages 20 --seqlens 8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/pe/bench-$b-r$round > $OUT/pe/bench-$b-r$round.txt 2>&1
    echo "bench $b round $round exit $? in $(( $(date +%s) - start )) s"
    grep -E "TFLOPS" $OUT/pe/bench-$b-r$round.txt | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-120
  done
done
cd $OUT && tar czf pe.tgz pe && rm -rf pe
