#!/usr/bin/env bash
# Stage 25 as first committed (backward-v1.cu.txt: 64 query rows a step at both head dims)
# beside v2 (backward-v2-bq128-d64.cu.txt: 128 at d64, FlashAttention-2's tile there, with
# WM = 4 warps along the queries and 64 keys a warp in S and dP): builds both in the
# standalone harness, checks v2, times both twice. Writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-warp-tiles
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
common=(-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128)
declare -A extra=([v1]="-DFLASHLAB_HOST_BLOCK_Q=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=99328 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864"
                  [v2-bq128-d64]="-DFLASHLAB_HOST_BLOCK_Q_D64=128 -DFLASHLAB_HOST_BLOCK_Q_D128=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=165888 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864")
variants=(v1 v2-bq128-d64)
for v in "${variants[@]}"; do
  mkdir -p /tmp/wt-$v && cp $exp/backward-$v.cu.txt /tmp/wt-$v/backward.cu && cp $exp/standalone.cu.txt /tmp/wt-$v/test.cu
  ( $nvcc "${common[@]}" ${extra[$v]} -DKERNEL_FILE='"/tmp/wt-'$v'/backward.cu"' -o /tmp/wt-$v/test /tmp/wt-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
timeout 300 /tmp/wt-v2-bq128-d64/test > $out/check-v2.txt 2>&1; echo "check v2 exit $?: $(tail -n 1 $out/check-v2.txt)"
grep -v " ok" $out/check-v2.txt | grep -iE "fail|err|mismatch" | head -10
for round in 1 2; do for v in "${variants[@]}"; do
  timeout 120 /tmp/wt-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; sed -E 's/^time //' $out/time-$v-$round.txt
done; done
