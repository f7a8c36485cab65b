#!/usr/bin/env bash
# Call R4 (an H200, carrying dist/xr): Nsight Compute's source counters on stage 31 at
# seqlen 8192, d128, to find which instructions the shared-memory store conflicts of the
# kernel-wide counter belong to (per SASS instruction: executions, wavefronts, ideal
# wavefronts).
set -u
mkdir -p $OUT/r4
(cd dist/xr && ./unpack.sh) || exit 1
F=dist/xr/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/r4/gpu.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
$NCU --version | tail -1 > $OUT/r4/ncu-version.txt
timeout -k 10 200 $NCU --kernel-name regex:"^natural_v_bf16_d128$" --launch-count 1 --section SourceCounters --section MemoryWorkloadAnalysis_Tables --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_stsm.sum,smsp__inst_executed_op_ldsm.sum -f -o $OUT/r4/src-31 $F stage 31 --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/r4/src-31.log 2>&1
echo "ncu exit $?"; tail -3 $OUT/r4/src-31.log
$NCU --import $OUT/r4/src-31.ncu-rep --page source --csv --print-source sass > $OUT/r4/src-31-sass.csv 2> $OUT/r4/src-31-sass.err
echo "source page exit $? ($(wc -l < $OUT/r4/src-31-sass.csv) lines)"; head -c 600 $OUT/r4/src-31-sass.err
$NCU --import $OUT/r4/src-31.ncu-rep --print-summary none > $OUT/r4/src-31.txt 2>&1
head -2 $OUT/r4/src-31-sass.csv | cut -c1-1500
grep -E "STSM|LDSM" $OUT/r4/src-31-sass.csv | head -12 | cut -c1-600
grep -iE "conflict|wavefront|stsm|ldsm" $OUT/r4/src-31.txt | head -20
cd $OUT && tar czf r4.tgz r4 && rm -rf r4
