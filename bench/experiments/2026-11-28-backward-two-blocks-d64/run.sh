#!/usr/bin/env bash
# Stage 22 at head dim 64 with two blocks an SM: __launch_bounds__(256, 2) caps the main
# kernel at 128 registers (234 without), so two 83 KB blocks fit an SM. Variants: base
# (stages/22-backward/kernels/backward.cu as committed), lb2 (the cap, 108 bytes of spill),
# lb2c16 (the cap with CHUNK_Q = 16: 52 bytes). Builds the three with the standalone harness,
# checks lb2 and lb2c16 against its CPU backward, times the three twice. Writes into $1.
# A second argument, build or measure, runs only that half.
set -u
out="$1"; mkdir -p "$out"; what="${2:-all}"
exp=bench/experiments/2026-11-28-backward-two-blocks-d64
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
common=(-std=c++17 -O3 --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_BLOCK_Q=64 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=82944 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=148480
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128)
variants=(base lb2 lb2c16)
if [ "$what" != measure ]; then
for v in "${variants[@]}"; do
  mkdir -p /tmp/exp-$v
  if [ $v = base ]; then cp stages/22-backward/kernels/backward.cu /tmp/exp-$v/backward.cu; else cp $exp/backward-$v.cu.txt /tmp/exp-$v/backward.cu; fi
  cp $exp/standalone.cu.txt /tmp/exp-$v/test.cu
  ( $nvcc "${common[@]}" -DKERNEL_FILE='"/tmp/exp-'$v'/backward.cu"' -o /tmp/exp-$v/test /tmp/exp-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
fi
[ "$what" = build ] && exit 0
for v in lb2 lb2c16; do timeout 300 /tmp/exp-$v/test > $out/check-$v.txt 2>&1; echo "check $v exit $?: $(tail -n 1 $out/check-$v.txt)"; done
for round in 1 2; do for v in "${variants[@]}"; do
  timeout 120 /tmp/exp-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; sed -E 's/^time //' $out/time-$v-$round.txt
done; done
