#!/usr/bin/env bash
# run2.sh's follow-up, on the run of record's machine: the kernel stage 22 became (128 keys,
# 8 warps, 8-byte vector REDs: backward-128keys-v2.cu.txt, a copy of
# stages/22-backward/kernels/backward.cu) beside 128keys (the same with 16-byte REDs after a
# shuffle) and red-v2 (64 keys, 8-byte REDs). Builds the three, checks 128keys-v2 against the
# CPU backward, times the three twice. Run from the repository root; writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-27-backward-dq-atomics
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cmp -s $exp/backward-128keys-v2.cu.txt stages/22-backward/kernels/backward.cu || echo "note: backward-128keys-v2.cu.txt differs from stages/22-backward/kernels/backward.cu (timing the copy)"
common=(-std=c++17 -O3 --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_BLOCK_Q=64
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128)
keys64=(-DFLASHLAB_HOST_WARPS=4 -DFLASHLAB_HOST_BLOCK_KV=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=58368 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=107520)
keys128=(-DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=82944 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=148480)
variants=(red-v2 128keys 128keys-v2)
for v in "${variants[@]}"; do
  if [ $v = red-v2 ]; then harness=standalone.cu.txt; tiles=("${keys64[@]}"); else harness=standalone-128keys.cu.txt; tiles=("${keys128[@]}"); fi
  mkdir -p /tmp/exp3-$v && cp $exp/backward-$v.cu.txt /tmp/exp3-$v/backward.cu && cp $exp/$harness /tmp/exp3-$v/test.cu
  ( $nvcc "${common[@]}" "${tiles[@]}" -DKERNEL_FILE='"/tmp/exp3-'$v'/backward.cu"' -o /tmp/exp3-$v/test /tmp/exp3-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
timeout 300 /tmp/exp3-128keys-v2/test > $out/check-128keys-v2.txt 2>&1; echo "check 128keys-v2 exit $?: $(tail -n 1 $out/check-128keys-v2.txt)"
for round in 1 2; do for v in "${variants[@]}"; do
  timeout 120 /tmp/exp3-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; grep "det0" $out/time-$v-$round.txt | sed -E 's/^time //'
done; done
for v in "${variants[@]}"; do echo "== $v round 1, deterministic"; grep "det1" $out/time-$v-1.txt | sed -E 's/^time //'; done
