#!/usr/bin/env bash
# Call C5 (the same warm machine): FlashAttention-4's last part installed, then its steady
# load at d128, seqlen 16384, no mask, for 8 s, sampled as in C1; then stage 19 again, so
# both sides were measured on this machine within a minute.
set -u
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?"
. /tmp/fa4/env.sh
cd dist/flashlab-gpu
mkdir -p $OUT/c5
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,utilization.gpu,temperature.gpu --format=csv,noheader -lms 50 > $OUT/c5/smi.csv &
smi=$!
sleep 1
echo "fa4 start $(date +%s.%N)" >> $OUT/c5/phases.txt
timeout -k 5 120 python3 ../../.bundle/fa4_loop.py 16384 128 8 > $OUT/c5/fa4.txt 2>&1
echo "fa4 end $(date +%s.%N)" >> $OUT/c5/phases.txt
sleep 2
echo "stage19 start $(date +%s.%N)" >> $OUT/c5/phases.txt
for i in 1 2 3 4 5 6; do
  timeout -k 5 60 ./flashlab stage 19 --batch 1 --heads 16 --seqlen 16384 --dim 128 --no-check --timing ungated >> $OUT/c5/stage19.txt 2>&1
done
echo "stage19 end $(date +%s.%N)" >> $OUT/c5/phases.txt
sleep 1
kill $smi
cat $OUT/c5/fa4.txt | tail -3
grep -E "time" $OUT/c5/stage19.txt | head -6
cat $OUT/c5/phases.txt
tar czf $OUT/c5.tgz -C $OUT c5 fa4-install.txt && rm -rf $OUT/c5
