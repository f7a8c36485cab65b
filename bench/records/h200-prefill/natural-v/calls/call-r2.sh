#!/usr/bin/env bash
# Call R2 (the same H200, right after R1, carrying dist/xr): stages 31, 30 and 28 again in
# the other order; Nsight Compute on 28 and 31 at seqlen 8192, d128.
set -u
mkdir -p $OUT/r2
(cd dist/xr && ./unpack.sh) || exit 1
F=dist/xr/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/r2/gpu.txt
start=$(date +%s)
timeout -k 10 120 $F bench --stages 31,30,28 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --out $OUT/r2/bench2 > $OUT/r2/bench2.txt 2>&1
echo "round 2 exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| [0-9]|^####" $OUT/r2/bench2.txt | cut -c1-160
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for s in 28 31; do
  k=$([ $s = 28 ] && echo three_consumers || echo natural_v)
  timeout -k 10 120 $NCU --kernel-name regex:"^${k}_bf16_d128$" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis --metrics smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active -f -o $OUT/r2/ncu-$s $F stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/r2/ncu-$s.log 2>&1
  echo "ncu $s exit $?"
  $NCU --import $OUT/r2/ncu-$s.ncu-rep --page raw --csv > $OUT/r2/ncu-$s-raw.csv 2>/dev/null
  $NCU --import $OUT/r2/ncu-$s.ncu-rep --print-summary none > $OUT/r2/ncu-$s.txt 2>/dev/null
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|smsp__inst_executed.sum|wavefronts_mem_shared.sum|bank_conflicts_pipe_lsu_mem_shared.sum|gmma_cycles|mio_throttle|issue_active" $OUT/r2/ncu-$s.txt | head -12
done
cd $OUT && tar czf r2.tgz r2 && rm -rf r2
