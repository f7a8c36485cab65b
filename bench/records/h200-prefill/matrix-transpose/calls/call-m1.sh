#!/usr/bin/env bash
# Call M1 (a fresh H200, carrying dist/xa: flashlab and the GPU test binaries of stages 20,
# 24 and 30, built at the commit this record names): stage 30's GPU tests and `sanitize.sh
# 30`; stages 20, 24 and 30 at d128, seqlen 4096-16384, causal and not, two rounds in
# opposite orders; Nsight Compute on 24 and 30 at seqlen 8192; stage 30's timeline.
set -u
mkdir -p $OUT/m1
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/m1/gpu.txt
start=$(date +%s)
timeout -k 10 150 dist/xa/tests/stage30-matrix-transpose-gpu > $OUT/m1/tests-30.txt 2>&1
echo "tests exit $? in $(( $(date +%s) - start )) s"; grep -E "test result|FAILED|failed" $OUT/m1/tests-30.txt | head
start=$(date +%s)
timeout -k 10 150 bash dist/xa/sanitize.sh 30 > $OUT/m1/sanitize30.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - start )) s"; grep -E "ERROR SUMMARY" $OUT/m1/sanitize30.txt | head
for r in 1 2; do
  order=$([ $r = 1 ] && echo 20,24,30 || echo 30,24,20)
  start=$(date +%s)
  timeout -k 10 100 $F bench --stages $order --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --out $OUT/m1/bench$r > $OUT/m1/bench$r.txt 2>&1
  echo "round $r ($order) exit $? in $(( $(date +%s) - start )) s"
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for s in 24 30; do
  k=$([ $s = 24 ] && echo v_transpose || echo matrix_transpose)
  timeout -k 10 120 $NCU --kernel-name regex:"^${k}_bf16_d128$" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis --metrics smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active -f -o $OUT/m1/ncu-$s $F stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/m1/ncu-$s.log 2>&1
  echo "ncu $s exit $?"
  $NCU --import $OUT/m1/ncu-$s.ncu-rep --page raw --csv > $OUT/m1/ncu-$s-raw.csv 2>/dev/null
  $NCU --import $OUT/m1/ncu-$s.ncu-rep --print-summary none > $OUT/m1/ncu-$s.txt 2>/dev/null
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|smsp__inst_executed.sum|wavefronts_mem_shared.sum|bank_conflicts_pipe_lsu_mem_shared.sum|gmma_cycles" $OUT/m1/ncu-$s.txt | head -12
done
timeout -k 5 60 $F timeline 30 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/m1/timeline-30.svg --json $OUT/m1/timeline-30.json > $OUT/m1/timeline-30.txt 2>&1
echo "timeline exit $?"; grep -E "consumer|producer" $OUT/m1/timeline-30.txt | cut -c1-100
cd $OUT && tar czf m1.tgz m1 && rm -rf m1
