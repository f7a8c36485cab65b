#!/usr/bin/env bash
# Call H3, an experiment: FlashAttention-3's 128 x 176 tile at d128 (stage 19 candidate,
# stage 18 with 176 keys at d128): its GPU tests, then a bench of stages 16, 18 and 19 at
# d128, three lengths, causal and not, twice in alternating order.
set -u
cd dist/flashlab-gpu && ./unpack.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout -k 10 200 tests/stage19-wide-keys-gpu --include-ignored --test-threads=1 > $OUT/stage19-gpu.txt 2>&1
echo "stage19 tests exit $?: $(grep -E 'test result' $OUT/stage19-gpu.txt | tail -1)"; grep -E "FAILED|panicked" $OUT/stage19-gpu.txt | head -5
./flashlab resources 19 | grep d128 > $OUT/resources19.txt
for order in "16,18,19" "19,18,16"; do
  timeout -k 10 150 ./flashlab bench --stages $order --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --out $OUT/bench-$order > $OUT/bench-$order.txt 2>&1
  echo "bench $order exit $?"
  grep -E "TFLOPS" $OUT/bench-$order.txt | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | grep -v "speed of light"
done
