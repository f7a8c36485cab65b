#!/usr/bin/env bash
# Call S2 (the same warm machine; the bundle stays from S1): FlashAttention-4's first part
# stashed; stage 19 against stage 18 at d64, two rounds in opposite orders.
set -u
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu
mkdir -p $OUT/s2
for order in 19,18 18,19; do
  timeout -k 10 120 ./flashlab bench --stages $order --seqlens 4096,8192,16384 --dims 64 --causal both --tokens 1 --out $OUT/s2/bench-${order//,/-} > $OUT/s2/bench-${order//,/-}.txt 2>&1
  echo "bench $order exit $?"
  grep -E "TFLOPS" $OUT/s2/bench-${order//,/-}.txt | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | grep -v "of light"
done
tar czf $OUT/s2.tgz -C $OUT s2 && rm -rf $OUT/s2
