#!/usr/bin/env bash
# Nsight Compute on a flashlab stage and on FlashAttention-4's Hopper forward, the same
# shape, the same metrics, one launch each: the tensor pipe, issue slots, warp stalls,
# shared-memory bank conflicts, occupancy, registers, and each kernel's executed SASS with
# its per-instruction counts (to count HGMMA, MUFU.EX2, FFMA, FMNMX, shuffles and barriers
# per K/V tile). Book: "Results", section "Where the time goes, beside FlashAttention-4".
#
# Usage (from the GPU bundle's folder, FlashAttention-4 on PYTHONPATH: . /tmp/fa4/env.sh):
#   side-by-side.sh OUT_DIR STAGE SEQLEN HEAD_DIM [causal]
# Out: OUT_DIR/<name>.ncu-rep, <name>-raw.csv (every metric), <name>-sass.csv (the source
# page: each SASS instruction with its executed count), for name stageN and fa4.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"; n="$2"; seqlen="$3"; d="$4"; causal="${5:-}"
mkdir -p "$out"
ncu="${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}"
flashlab="${FLASHLAB:-./flashlab}"
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
          --section InstructionStats --section Occupancy --section LaunchStats
          --section MemoryWorkloadAnalysis_Tables --section SourceCounters)
metrics=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,gpu__time_duration.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum
flags=(--batch 1 --heads 16 --seqlen "$seqlen" --dim "$d")
[ "$causal" = causal ] && flags+=(--causal)
# The stage: its one checked-free launch (the first kernel whose name starts with the
# stage's kernel prefix; a stage has one kernel a launch).
"$ncu" --clock-control none --kernel-name regex:"_(bf16|f16)_d[0-9]+$" --launch-count 1 "${sections[@]}" --metrics "$metrics" --import-source yes \
    -f -o "$out/stage$n" "$flashlab" stage "$n" --no-time --no-check --seed 1 "${flags[@]}" > "$out/stage$n.log" 2>&1
# FlashAttention-4: the launch between cudaProfilerStart and Stop.
"$ncu" --clock-control none --profile-from-start off "${sections[@]}" --metrics "$metrics" \
    -f -o "$out/fa4" python3 "$here/fa4_once.py" "$seqlen" "$d" $causal > "$out/fa4.log" 2>&1
for name in "stage$n" fa4; do
    "$ncu" -i "$out/$name.ncu-rep" --page raw --csv --print-units base > "$out/$name-raw.csv"
    "$ncu" -i "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv" 2>"$out/$name-sass.err" || true
done
ls -la "$out"
