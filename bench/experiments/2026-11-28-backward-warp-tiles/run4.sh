#!/usr/bin/env bash
# Stage 25 as committed in ce33102 (v2: backward-v2-bq128-d64.cu.txt) beside v3
# (backward-v3-steps.cu.txt: the step's head and query block carried from step to step
# instead of divided out of the step index, and dQ's four row addresses from one 64-bit
# base a step): builds both in the standalone harness, checks v3, times both twice.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-warp-tiles
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
common=(-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128)
declare -A extra=([v2]="-DFLASHLAB_HOST_BLOCK_Q_D64=128 -DFLASHLAB_HOST_BLOCK_Q_D128=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=165888 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864"
                  [v3-steps]="-DFLASHLAB_HOST_BLOCK_Q_D64=128 -DFLASHLAB_HOST_BLOCK_Q_D128=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=165888 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864")
variants=(v2 v3-steps)
declare -A file=([v2]=v2-bq128-d64 [v3-steps]=v3-steps)
for v in "${variants[@]}"; do
  mkdir -p /tmp/wt-$v && cp $exp/backward-${file[$v]}.cu.txt /tmp/wt-$v/backward.cu && cp $exp/standalone.cu.txt /tmp/wt-$v/test.cu
  ( $nvcc "${common[@]}" ${extra[$v]} -DKERNEL_FILE='"/tmp/wt-'$v'/backward.cu"' -o /tmp/wt-$v/test /tmp/wt-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
timeout 300 /tmp/wt-v3-steps/test > $out/check-v3.txt 2>&1; echo "check v3 exit $?: $(tail -n 1 $out/check-v3.txt)"
grep -v " ok" $out/check-v3.txt | grep -iE "fail|err|mismatch" | head -10
for round in 1 2; do for v in "${variants[@]}"; do
  timeout 120 /tmp/wt-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; sed -E 's/^time //' $out/time-$v-$round.txt
done; done
