#!/usr/bin/env bash
# call.sh (prepared, not run): on a fresh machine, carrying dist/pe/ (build.sh). The 2-of-8
# build's stage 20 GPU tests and sanitizer; its timeline at d128, seqlen 8192 (how long a
# softmax takes, and how much of it runs beside the other consumer's); then stage 20 of each
# build, the base first and last, two rounds, at d64 and d128 (an FP8 bench of one stage
# over 18 shapes took about 75 s, so d256 is left out here).
set -u
root=$(pwd)
mkdir -p $OUT/pe
for d in base p1 p2 p3; do (cd dist/pe/$d && ./unpack.sh) || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/pe/gpu.txt
cd dist/pe/p2
timeout -k 10 120 tests/stage20-fp8-gpu --include-ignored --test-threads=1 > $OUT/pe/tests-p2.txt 2>&1
echo "p2 stage 20 tests exit $?: $(grep 'test result' $OUT/pe/tests-p2.txt | cut -c1-80)"
timeout -k 10 100 ./sanitize.sh 20 > $OUT/pe/sanitize-p2.txt 2>&1; echo "p2 sanitize 20 exit $?: $(tail -n 1 $OUT/pe/sanitize-p2.txt)"
timeout -k 5 60 ./flashlab timeline 20 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/pe/timeline-p2-d128.svg --json $OUT/pe/timeline-p2-d128.json > $OUT/pe/timeline-p2-d128.txt 2>&1
echo "p2 timeline exit $?: $(grep -E 'softmax' $OUT/pe/timeline-p2-d128.txt | head -1)"
cd $root
for round in 1 2; do
  order="base p1 p2 p3"; [ $round = 2 ] && order="p3 p2 p1 base"
  for b in $order; do
    start=$(date +%s)
    timeout -k 10 100 dist/pe/$b/flashlab bench --stages 20 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/pe/bench-$b-r$round > $OUT/pe/bench-$b-r$round.txt 2>&1
    echo "bench $b round $round exit $? in $(( $(date +%s) - start )) s"
  done
done
cd $OUT && tar czf pe.tgz pe && rm -rf pe
