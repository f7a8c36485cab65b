#!/usr/bin/env bash
# Session 9, call R4: FlashAttention-4's last part installed; the GPU tests of the backward
# stages (22, 23, 25) on the bundle of the record's build; sanitize.sh 25 (its P and dS
# stores stepped since the last sanitizer run) and 23.
set -u
root="$(pwd)"
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?: $(tail -n 1 $OUT/fa4-install.txt)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/r4
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/r4/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/r4/gpu.txt
for t in stage25-backward-warp-tiles-gpu stage22-backward-gpu stage23-hopper-backward-gpu; do
  timeout -k 10 150 ./tests/$t --include-ignored --test-threads=1 > $OUT/r4/test-$t.txt 2>&1
  echo "$t exit $?: $(grep 'test result' $OUT/r4/test-$t.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/r4/test-$t.txt | head -4 | cut -c1-300
done
for n in 25 23; do
  timeout -k 10 120 ./sanitize.sh $n > $OUT/r4/sanitize$n.txt 2>&1
  echo "sanitize $n exit $?: $(tail -n 1 $OUT/r4/sanitize$n.txt)"
done
cp $OUT/fa4-install.txt $OUT/r4/
cd $root
tar czf $OUT/r4.tgz -C $OUT r4 && rm -rf $OUT/r4
