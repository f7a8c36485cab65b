#!/usr/bin/env bash
# Call G1: the FP8 stages' GPU tests (20, 21, 24) on the bundle whose per-tensor trials go
# through assert_stage_on_grid.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/g1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/g1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/g1/gpu.txt
for t in stage20-fp8-gpu stage21-incoherent-gpu stage24-v-transpose-gpu stage19-lazy-rescale-gpu; do
  timeout -k 10 100 ./tests/$t > $OUT/g1/test-$t.txt 2>&1
  echo "$t exit $?: $(grep 'test result' $OUT/g1/test-$t.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/g1/test-$t.txt | head -4 | cut -c1-300
done
cd $root
tar czf $OUT/g1.tgz -C $OUT g1 && rm -rf $OUT/g1
