#!/usr/bin/env bash
# Call W1: the exponentials around the wait for P V (FlashAttention-4's SASS order): three
# variants of stage 19, "20" (a quarter of the exponentials before the wait, the lazy
# rescale after P is packed), "21" (the same with the eager rescale inside, FA4's order),
# "22" (half before the wait, lazy after). GPU tests of 20 and 21; two bench rounds of
# 19..22 in opposite orders at d64, d128, d256.
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/w1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/w1/gpu.txt
for t in stage20-var20-gpu stage21-var21-gpu stage22-var22-gpu; do
  timeout -k 10 120 tests/$t --include-ignored --test-threads=1 > $OUT/w1/$t.txt 2>&1
  echo "$t exit $?: $(grep -E 'test result' $OUT/w1/$t.txt | tail -1)"
  grep -E "FAILED|panicked" $OUT/w1/$t.txt | head -4
done
for order in 19,20,21,22 22,21,20,19; do
  start=$(date +%s)
  timeout -k 10 230 ./flashlab bench --stages $order --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/w1/bench-${order//,/-} > $OUT/w1/bench-${order//,/-}.txt 2>&1
  echo "bench $order exit $? in $(( $(date +%s) - start )) s"
done
tar czf $OUT/w1.tgz -C $OUT w1 && rm -rf $OUT/w1
