#!/usr/bin/env bash
# Call X1, two experiments on stage 18's kernel (= stage 16's at d64 and d128):
# stage "19" the lazy rescale at d64 too; stage "20" three K/V ring slots at d64 and d128.
# Their GPU tests, then two bench rounds in opposite orders, d64 and d128, causal both.
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/x1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/x1/gpu.txt
for t in stage19-lazy-d64-gpu stage20-three-slots-gpu; do
  timeout -k 10 150 tests/$t --include-ignored --test-threads=1 > $OUT/x1/$t.txt 2>&1
  echo "$t exit $?: $(grep -E 'test result' $OUT/x1/$t.txt | tail -1)"
done
./flashlab resources 19 > $OUT/x1/resources19.txt; ./flashlab resources 20 > $OUT/x1/resources20.txt
for order in 18,19,20 20,19,18; do
  timeout -k 10 200 ./flashlab bench --stages $order --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/x1/bench-${order//,/-} > $OUT/x1/bench-${order//,/-}.txt 2>&1
  echo "bench $order exit $?"
  grep -E "TFLOPS" $OUT/x1/bench-${order//,/-}.txt | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | grep -v "of light"
done
tar czf $OUT/x1.tgz -C $OUT x1 && rm -rf $OUT/x1
