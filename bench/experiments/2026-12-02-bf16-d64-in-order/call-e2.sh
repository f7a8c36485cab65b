#!/usr/bin/env bash
# Call E2 (a fresh H200, carrying dist/io192 and dist/io128: flashlab built with an
# experiment stage 29, stage 26 at d64 with its three consumers in order and 192 or 128 keys
# a tile, FLASHLAB_EXP_BF16_D64=io192 / io128, and that stage's GPU test binary): the tests;
# then stage 29 beside stage 26 at d64 for each build, in both orders, with cuDNN once.
set -u
mkdir -p $OUT/e2
for v in io192 io128; do (cd dist/$v && ./unpack.sh) || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e2/gpu.txt
for v in io192 io128; do
  timeout -k 10 90 dist/$v/tests/stage29-gpu --include-ignored --test-threads=1 > $OUT/e2/tests-$v.txt 2>&1
  echo "$v tests exit $?: $(grep 'test result' $OUT/e2/tests-$v.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/e2/tests-$v.txt | head -4 | cut -c1-240
done
show() { grep -E "TFLOPS" $1 | grep -v "of light" | sed -E 's/^\[[a-z]+ [0-9]+\/[0-9]+\] //' | cut -c1-100; }
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=sdpa-cudnn timeout -k 10 90 dist/io192/flashlab bench --stages 26,29 --seqlens 4096,8192,16384 --dims 64 --causal both --tokens 1 --baselines --out $OUT/e2/io192 > $OUT/e2/io192.txt 2>&1
echo "io192 exit $? in $(( $(date +%s) - start )) s"; show $OUT/e2/io192.txt
for v in io128 io192 io128; do
  start=$(date +%s)
  timeout -k 10 60 dist/$v/flashlab bench --stages 29,26 --seqlens 4096,8192,16384 --dims 64 --causal both --tokens 1 --out $OUT/e2/$v-$start > $OUT/e2/$v-$start.txt 2>&1
  echo "$v exit $? in $(( $(date +%s) - start )) s"; show $OUT/e2/$v-$start.txt
done
cd $OUT && tar czf e2.tgz e2 && rm -rf e2
