#!/usr/bin/env bash
# Call C1: the SM clock and power under stage 19's steady load (d128, seqlen 16384, no mask),
# sampled by nvidia-smi every 50 ms while `flashlab stage 19` times ungated launches, six
# times over; the same idle. (FlashAttention-4's side is call C5, on the same machine.)
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/c1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/c1/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,utilization.gpu,temperature.gpu --format=csv,noheader -lms 50 > $OUT/c1/smi.csv &
smi=$!
sleep 1
echo "stage19 start $(date +%s.%N)" >> $OUT/c1/phases.txt
for i in 1 2 3 4 5 6; do
  timeout -k 5 60 ./flashlab stage 19 --batch 1 --heads 16 --seqlen 16384 --dim 128 --no-check --timing ungated >> $OUT/c1/stage19.txt 2>&1
done
echo "stage19 end $(date +%s.%N)" >> $OUT/c1/phases.txt
sleep 1
kill $smi
grep -E "time|TFLOPS" $OUT/c1/stage19.txt | head -8
cat $OUT/c1/phases.txt
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $OUT/c1
