#!/usr/bin/env bash
# Stage 25 as committed (stages/25-backward-warp-tiles/kernels/backward.cu) beside v4
# (backward-v4-stepped-stores.cu.txt: the P and dS stores stepped from one offset a lane),
# both in the standalone harness: builds both, checks both against the harness's CPU
# backward (the committed kernel's step indices were last reshaped after the session's GPU
# time ran out, checked on the host only), times both twice. Run from the repository root
# on the GPU machine; writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-stepped-stores
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
common=(-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128
  -DFLASHLAB_HOST_BLOCK_Q_D64=128 -DFLASHLAB_HOST_BLOCK_Q_D128=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=165888 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864)
declare -A src=([25]=stages/25-backward-warp-tiles/kernels/backward.cu [v4]=$exp/backward-v4-stepped-stores.cu.txt)
for v in 25 v4; do
  mkdir -p /tmp/ss-$v && cp ${src[$v]} /tmp/ss-$v/backward.cu && cp $exp/standalone.cu.txt /tmp/ss-$v/test.cu
  ( $nvcc "${common[@]}" -DKERNEL_FILE='"/tmp/ss-'$v'/backward.cu"' -o /tmp/ss-$v/test /tmp/ss-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
for v in 25 v4; do timeout 300 /tmp/ss-$v/test > $out/check-$v.txt 2>&1; echo "check $v exit $?: $(tail -n 1 $out/check-$v.txt)"; done
for round in 1 2; do for v in 25 v4; do
  timeout 120 /tmp/ss-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; sed -E 's/^time //' $out/time-$v-$round.txt
done; done
