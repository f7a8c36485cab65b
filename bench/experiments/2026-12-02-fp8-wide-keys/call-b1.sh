#!/usr/bin/env bash
# Call B1 (a fresh machine, carrying dist/fw from build.sh): each variant's stage 20 GPU
# tests at d64 and d128 (its d256 kernels are not part of the experiment); timelines of the
# base and the sequential 192- and 256-key builds at d128, seqlen 8192; then stage 20 of
# each build at d64 and d128, seqlen 8192 and 16384, causal and not, in two rounds of
# opposite order (the control s128 in the first only).
set -u
root=$(pwd)
mkdir -p $OUT/fw
for d in base s128 s192 s256 o192; do (cd dist/fw/$d && ./unpack.sh) || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/fw/gpu.txt
for b in s128 s192 s256 o192; do
  cd dist/fw/$b
  timeout -k 10 150 tests/stage20-fp8-gpu --include-ignored --test-threads=1 --skip d256 > $OUT/fw/tests-$b.txt 2>&1
  echo "$b tests exit $?: $(grep 'test result' $OUT/fw/tests-$b.txt | cut -c1-80)"
  grep -E "panicked|FAILED|failed" $OUT/fw/tests-$b.txt | head -4 | cut -c1-240
  cd $root
done
for b in base s192 s256; do
  timeout -k 5 60 dist/fw/$b/flashlab timeline 20 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/fw/timeline-$b-d128.svg --json $OUT/fw/timeline-$b-d128.json > $OUT/fw/timeline-$b-d128.txt 2>&1
  echo "$b timeline d128 exit $?: $(grep -E 'softmax' $OUT/fw/timeline-$b-d128.txt | head -1 | cut -c1-120)"
done
for round in 1 2; do
  order="base s128 s192 s256 o192"; [ $round = 2 ] && order="o192 s256 s192 base"
  for b in $order; do
    start=$(date +%s)
    timeout -k 10 120 dist/fw/$b/flashlab bench --stages 20 --seqlens 8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/fw/bench-$b-r$round > $OUT/fw/bench-$b-r$round.txt 2>&1
    echo "bench $b round $round exit $? in $(( $(date +%s) - start )) s"
    grep -E "TFLOPS" $OUT/fw/bench-$b-r$round.txt | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-120
  done
done
cd $OUT && tar czf fw.tgz fw && rm -rf fw
