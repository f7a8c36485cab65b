#!/usr/bin/env bash
# Stage 22's main kernel with its dQ atomics as they are, removed (a wrong dQ, for the cost)
# and as sm_90's 8-byte vector REDs, timed by the standalone harness the kernel was first
# checked with (standalone.cu.txt: the kernel file is its -DKERNEL_FILE); then ncu on the
# kernel as it is. Run from the repository root on the GPU machine; writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-27-backward-dq-atomics
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
flags=(-std=c++17 -O3 --expt-relaxed-constexpr -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_WARPS=4 -DFLASHLAB_HOST_BLOCK_KV=64 -DFLASHLAB_HOST_BLOCK_Q=64 -DFLASHLAB_HOST_NSTAGES=2
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128
  -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=58368 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=107520)
for v in base no-atomics red-v2; do
  mkdir -p /tmp/exp-$v && cp $exp/backward-$v.cu.txt /tmp/exp-$v/backward.cu && cp $exp/standalone.cu.txt /tmp/exp-$v/test.cu
  ( $nvcc "${flags[@]}" -DKERNEL_FILE='"/tmp/exp-'$v'/backward.cu"' -o /tmp/exp-$v/test /tmp/exp-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
for v in base red-v2; do timeout 120 /tmp/exp-$v/test > $out/check-$v.txt 2>&1; echo "check $v: $(tail -n 1 $out/check-$v.txt)"; done
for round in 1 2; do for v in base no-atomics red-v2; do
  timeout 120 /tmp/exp-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; grep "det0" $out/time-$v-$round.txt | sed -E 's/^time //'
done; done
grep "det1" $out/time-base-1.txt | sed -E 's/^time //'
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 200 $ncu --kernel-name regex:'^bwd_bf16_d128' --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy /tmp/exp-base/test time > $out/ncu-base.txt 2>&1
echo "ncu exit $?"; grep -E "Duration|Throughput|Pipe|Stall|Warp Cycles|Issued|Eligible|Active Warps|L2 Hit|Bank" $out/ncu-base.txt | head -40
