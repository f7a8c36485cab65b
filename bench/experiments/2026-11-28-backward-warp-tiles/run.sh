#!/usr/bin/env bash
# Stage 25's kernel (FlashAttention-2's warp tiles; stages/25-backward-warp-tiles/kernels/
# backward.cu) beside stage 22's, through the standalone harness: builds both, checks stage
# 25 against the harness's CPU backward, times both twice, and profiles each main kernel once
# at d64 (seqlen 4096) and d128 (8192) with Nsight Compute. Writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-warp-tiles
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
common=(-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_BLOCK_Q=64 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128)
declare -A smem=([22]="-DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=82944 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=148480"
                 [25]="-DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=99328 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864")
declare -A src=([22]=stages/22-backward/kernels/backward.cu [25]=stages/25-backward-warp-tiles/kernels/backward.cu)
for v in 22 25; do
  mkdir -p /tmp/wt-$v && cp ${src[$v]} /tmp/wt-$v/backward.cu && cp $exp/standalone.cu.txt /tmp/wt-$v/test.cu
  ( $nvcc "${common[@]}" ${smem[$v]} -DKERNEL_FILE='"/tmp/wt-'$v'/backward.cu"' -o /tmp/wt-$v/test /tmp/wt-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
timeout 300 /tmp/wt-25/test > $out/check-25.txt 2>&1; echo "check 25 exit $?: $(tail -n 1 $out/check-25.txt)"
grep -v "ok" $out/check-25.txt | head -20
for round in 1 2; do for v in 22 25; do
  timeout 120 /tmp/wt-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; sed -E 's/^time //' $out/time-$v-$round.txt
done; done
MET=--metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_ldsm.sum,gpu__time_duration.sum
for v in 22 25; do
  timeout 120 $NCU --section WarpStateStats $MET -k regex:"^bwd_bf16_d64" -c 1 /tmp/wt-$v/test time > $out/ncu-$v-d64.txt 2>&1
  timeout 120 $NCU --section WarpStateStats $MET -k regex:"^bwd_bf16_d128" -c 1 /tmp/wt-$v/test time > $out/ncu-$v-d128.txt 2>&1
  for d in 64 128; do echo "== ncu $v d$d"; grep -E "duration|hmma|issue_active|wavefronts|bank_conflicts|op_ldsm" $out/ncu-$v-d$d.txt; done
done
