#!/usr/bin/env bash
# Call M2 (an H200, carrying dist/xb: flashlab with stage 31, stage 23's backward with dS^T
# stored by stmatrix, and stage 31's GPU test binary). Stage 31's GPU tests; the backward
# bench of 23 and 31, two rounds in opposite orders. Then, for stage 30's record: racecheck
# and memcheck on 1100 keys (nine V tiles through the two-slot rings), and Nsight Compute on
# stage 20 with the metrics of call M1.
set -u
mkdir -p $OUT/m2
(cd dist/xb && ./unpack.sh) || exit 1
F=dist/xb/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/m2/gpu.txt
start=$(date +%s)
timeout -k 10 200 dist/xb/tests/stage31-ds-stmatrix-gpu > $OUT/m2/tests-31.txt 2>&1
echo "tests exit $? in $(( $(date +%s) - start )) s"; grep -E "test result|FAILED|failed" $OUT/m2/tests-31.txt | head
for r in 1 2; do
  order=$([ $r = 1 ] && echo 23,31 || echo 31,23)
  start=$(date +%s)
  timeout -k 10 150 $F bench --backward --stages $order --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 --out $OUT/m2/bench$r > $OUT/m2/bench$r.txt 2>&1
  echo "round $r ($order) exit $? in $(( $(date +%s) - start )) s"
done
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  timeout -k 10 90 $S --tool $tool --error-exitcode 1 $F stage 30 --batch 1 --heads 2 --seqlen-q 300 --seqlen-k 1100 --dim 128 --no-time > $OUT/m2/$tool-30-long.txt 2>&1
  echo "$tool 30 long exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/m2/$tool-30-long.txt
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout -k 10 120 $NCU --kernel-name regex:"^fp8_bf16_d128$" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis --metrics smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum -f -o $OUT/m2/ncu-20 $F stage 20 --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/m2/ncu-20.log 2>&1
echo "ncu 20 exit $?"
$NCU --import $OUT/m2/ncu-20.ncu-rep --page raw --csv > $OUT/m2/ncu-20-raw.csv 2>/dev/null
$NCU --import $OUT/m2/ncu-20.ncu-rep --print-summary none > $OUT/m2/ncu-20.txt 2>/dev/null
grep -E "Duration|Executed Instructions  |smsp__inst_executed.sum|wavefronts_mem_shared.sum|bank_conflicts_pipe_lsu_mem_shared.sum" $OUT/m2/ncu-20.txt | head -8
cd $OUT && tar czf m2.tgz m2 && rm -rf m2
