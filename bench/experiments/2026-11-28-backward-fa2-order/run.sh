#!/usr/bin/env bash
# Stage 25 as committed (ad90775) beside FlashAttention-2's orders within a step and a
# staggered walk over the query blocks, each built into the standalone harness: checked
# against its CPU backward (15 shapes x bf16/f16 x d64/d128), then timed twice (bf16, batch
# 1, 16 heads, d64 and d128 at seqlen 4096/8192/16384, causal and not). Run from the
# repository root on the GPU machine; writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-fa2-order
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
common=(-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128
  -DFLASHLAB_HOST_BLOCK_Q_D64=128 -DFLASHLAB_HOST_BLOCK_Q_D128=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=165888 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864)
vs=(25 a-p-early b-dq-before-dk c-both d-stagger e-dq-before-dk-stagger)
for v in "${vs[@]}"; do
  mkdir -p /tmp/fo-$v && cp $exp/standalone.cu.txt /tmp/fo-$v/test.cu
  if [ $v = 25 ]; then cp stages/25-backward-warp-tiles/kernels/backward.cu /tmp/fo-$v/backward.cu; else cp $exp/backward-$v.cu.txt /tmp/fo-$v/backward.cu; fi
  ( $nvcc "${common[@]}" -DKERNEL_FILE='"/tmp/fo-'$v'/backward.cu"' -o /tmp/fo-$v/test /tmp/fo-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
for v in "${vs[@]}"; do timeout 120 /tmp/fo-$v/test > $out/check-$v.txt 2>&1; echo "check $v exit $?: $(tail -n 1 $out/check-$v.txt)"; done
for round in 1 2; do for v in "${vs[@]}"; do
  timeout 120 /tmp/fo-$v/test time > $out/time-$v-$round.txt 2>&1
done; done
# One line per shape: TFLOP/s of each variant, rounds 1 and 2.
printf "%-34s" shape; for v in "${vs[@]}"; do printf "%16s" "$v"; done; echo
while read -r shape; do
  printf "%-34s" "$shape"
  for v in "${vs[@]}"; do
    a=$(grep -F "$shape:" $out/time-$v-1.txt | grep -oE "[0-9.]+ TFLOPS" | cut -d' ' -f1)
    b=$(grep -F "$shape:" $out/time-$v-2.txt | grep -oE "[0-9.]+ TFLOPS" | cut -d' ' -f1)
    printf "%16s" "$a/$b"
  done; echo
done < <(sed -E 's/^time (.*): pre.*/\1/' $out/time-25-1.txt)
