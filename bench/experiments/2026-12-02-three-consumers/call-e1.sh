#!/usr/bin/env bash
# Call E1 (a fresh H200, carrying dist/xa and dist/xb: the flashlab of the three-consumers
# branch built twice, A with stage 28's defaults (d64 192 keys, d128 P V in one part) and B
# with FLASHLAB_EXP_FP8_PV_PART_D128=64 FLASHLAB_EXP_FP8_BLOCK_KV_D64=128, and the GPU test
# binaries of stages 28 and 29; dist/cudnn-frontend): the tests; stage 29 (bf16, three
# consumers in order at d128) beside stage 26 and cuDNN; stage 28 (FP8) A and B beside
# stage 27 and cuDNN's FP8; repeats in the other order; timelines at d128.
set -u
root=$(pwd)
mkdir -p $OUT/e1
for v in xa xb; do (cd dist/$v && ./unpack.sh) || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e1/gpu.txt
for v in xa xb; do
  for t in stage28-three-consumers stage29-three-consumers-bf16; do
    [ $v = xb ] && [ $t = stage29-three-consumers-bf16 ] && continue
    timeout -k 10 120 dist/$v/tests/$t-gpu --include-ignored --test-threads=1 > $OUT/e1/tests-$v-$t.txt 2>&1
    echo "$v $t tests exit $?: $(grep 'test result' $OUT/e1/tests-$v-$t.txt | cut -c1-80)"
    grep -E "panicked|FAILED" $OUT/e1/tests-$v-$t.txt | head -4 | cut -c1-240
  done
done
show() { grep -E "TFLOPS" $1 | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-110; }
A=dist/xa/flashlab; B=dist/xb/flashlab
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=sdpa-cudnn timeout -k 10 150 $A bench --stages 26,29 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --baselines --out $OUT/e1/bf16 > $OUT/e1/bf16.txt 2>&1
echo "bf16 bench exit $? in $(( $(date +%s) - start )) s"; show $OUT/e1/bf16.txt
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/e1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8 timeout -k 10 170 $A bench --stages 27,28 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --out $OUT/e1/fp8a > $OUT/e1/fp8a.txt 2>&1
echo "fp8 A bench exit $? in $(( $(date +%s) - start )) s"; show $OUT/e1/fp8a.txt
start=$(date +%s)
timeout -k 10 90 $B bench --stages 28,27 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/e1/fp8b > $OUT/e1/fp8b.txt 2>&1
echo "fp8 B bench exit $? in $(( $(date +%s) - start )) s"; show $OUT/e1/fp8b.txt
start=$(date +%s)
timeout -k 10 60 $A bench --stages 29,26 --seqlens 8192,16384 --dims 128 --causal both --tokens 1 --out $OUT/e1/bf16-r > $OUT/e1/bf16-r.txt 2>&1
echo "bf16 repeat exit $? in $(( $(date +%s) - start )) s"; show $OUT/e1/bf16-r.txt
for s in 28 29; do
  timeout -k 5 40 $A timeline $s --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/e1/timeline-$s-d128.svg --json $OUT/e1/timeline-$s-d128.json > $OUT/e1/timeline-$s-d128.txt 2>&1
  echo "timeline $s d128 exit $?: $(grep -E 'softmax' $OUT/e1/timeline-$s-d128.txt | head -1 | cut -c1-120)"
done
cd $OUT && tar czf e1.tgz e1 && rm -rf e1
