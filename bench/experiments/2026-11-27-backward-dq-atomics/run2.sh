#!/usr/bin/env bash
# run.sh's follow-up: stage 22's main kernel with dQ's atomics as they were (base), as sm_90's
# 8-byte vector REDs (red-v2), as 16-byte vector REDs after one shuffle (red-v4: a copy of
# stages/22-backward/kernels/backward.cu, variant A), and the same with FlashAttention-2's
# key block, 128 keys and 8 warps (128keys: variant B, with standalone-128keys.cu.txt, whose
# launches take the kernel's constants). Builds all four, checks red-v4 and 128keys against
# the CPU backward, times all four twice, then ncu on red-v4 and 128keys.
# Run from the repository root on the GPU machine; writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-27-backward-dq-atomics
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cmp -s $exp/backward-red-v4.cu.txt stages/22-backward/kernels/backward.cu || echo "note: backward-red-v4.cu.txt differs from stages/22-backward/kernels/backward.cu (timing the copy)"
common=(-std=c++17 -O3 --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_BLOCK_Q=64
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128)
keys64=(-DFLASHLAB_HOST_WARPS=4 -DFLASHLAB_HOST_BLOCK_KV=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=58368 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=107520)
keys128=(-DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=82944 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=148480)
variants=(base red-v2 red-v4 128keys)
for v in "${variants[@]}"; do
  if [ $v = 128keys ]; then harness=standalone-128keys.cu.txt; tiles=("${keys128[@]}"); else harness=standalone.cu.txt; tiles=("${keys64[@]}"); fi
  mkdir -p /tmp/exp-$v && cp $exp/backward-$v.cu.txt /tmp/exp-$v/backward.cu && cp $exp/$harness /tmp/exp-$v/test.cu
  ( $nvcc "${common[@]}" "${tiles[@]}" -DKERNEL_FILE='"/tmp/exp-'$v'/backward.cu"' -o /tmp/exp-$v/test /tmp/exp-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
# Registers and spills of the main kernels (bwd_<dtype>_d<D>), from ptxas.
for v in "${variants[@]}"; do
  echo "== $v: $(awk '/Compiling entry function .bwd_(bf16|f16)_d/ {k=$7} /spill stores/ && k {s=$5"/"$9} /Used [0-9]+ registers/ && k {printf "%s %s regs spill-st/ld %s; ", k, $5, s; k=""}' $out/build-$v.txt)"
done
for v in red-v4 128keys; do timeout 300 /tmp/exp-$v/test > $out/check-$v.txt 2>&1; echo "check $v exit $?: $(tail -n 1 $out/check-$v.txt)"; done
for round in 1 2; do for v in "${variants[@]}"; do
  timeout 120 /tmp/exp-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; grep "det0" $out/time-$v-$round.txt | sed -E 's/^time //'
done; done
for v in "${variants[@]}"; do echo "== $v round 1, deterministic"; grep "det1" $out/time-$v-1.txt | sed -E 's/^time //'; done
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in red-v4 128keys; do
  timeout 200 $ncu --kernel-name regex:'^bwd_bf16_d128' --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy /tmp/exp-$v/test time > $out/ncu-$v.txt 2>&1
  echo "== ncu $v exit $?"; grep -E "Duration|Throughput|Pipe|Stall|Warp Cycles|Issued|Eligible|Active Warps|L2 Hit|Bank" $out/ncu-$v.txt | head -40
done
