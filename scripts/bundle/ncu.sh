#!/usr/bin/env bash
# Nsight Compute on stage N, summarized: for each kernel of one run (checked and timed
# runs launch each kernel many times; this one launches each once), the metrics that
# matter for attention: tensor-pipe utilization (HMMA = mma.sync, GMMA = wgmma),
# shared-memory wavefronts against the ideal and bank conflicts, ldmatrix count,
# achieved occupancy, DRAM throughput, and the top warp-stall reasons.
# The full report is kept as ncu-stage-N.ncu-rep (in $NCU_OUT, default the current
# folder): open it in Nsight Compute for everything else.
#
# Usage: ncu.sh N [flashlab stage flags]   (default: --batch 1 --heads 16 --seqlen 4096 --dim 128)
#        ncu.sh --summarize RAW.csv        (summarize `ncu -i R --page raw --csv --print-units base`)
# ncu comes from $NCU, $PATH, $CUDA_HOME/bin or /usr/local/cuda/bin. Profiling may need
# root or NVreg_RestrictProfilingToAdminUsers=0 (ncu says ERR_NVGPUCTRPERM otherwise).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/unpack.sh"

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# The metrics asked for by name (only those this GPU's ncu knows are requested), plus the
# WarpStateStats section for the stall reasons, whose names differ between versions.
WANTED=(
    gpu__time_duration.sum
    launch__grid_size launch__block_size launch__registers_per_thread
    launch__shared_mem_per_block_dynamic launch__shared_mem_per_block_static
    launch__occupancy_limit_registers launch__occupancy_limit_shared_mem
    sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
    sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
    sm__inst_executed_pipe_tensor_op_hmma.sum
    sm__inst_executed_pipe_tensor_op_gmma.sum
    smsp__sass_inst_executed_op_shared_ld.sum
    smsp__sass_inst_executed_op_shared_st.sum
    smsp__sass_inst_executed_op_ldsm.sum
    smsp__inst_executed_op_ldsm.sum
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
    smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
    smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
    sm__warps_active.avg.pct_of_peak_sustained_active
    sm__maximum_warps_per_active_cycle_pct
    dram__throughput.avg.pct_of_peak_sustained_elapsed
    sm__throughput.avg.pct_of_peak_sustained_elapsed
    smsp__issue_active.avg.pct_of_peak_sustained_active
)

summarize() { # raw.csv
    python3 - "$1" <<'PY'
import csv, re, sys

path = sys.argv[1]
with open(path, newline="") as f:
    rows = [r for r in csv.reader(f) if r]
# ncu may print ==PROF== / ==WARNING== lines before the table.
start = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
if start is None:
    sys.exit(f"ncu.sh: {path} has no 'Kernel Name' column: not an ncu --page raw --csv export")
head = rows[start]
body = rows[start + 1:]
units = {}
if body and not body[0][head.index("ID")].strip() if "ID" in head else False:
    units = dict(zip(head, body[0]))
    body = body[1:]

def num(v):
    v = (v or "").replace(",", "").strip()
    try:
        return float(v)
    except ValueError:
        return None

def fmt(x, unit=""):
    if x is None:
        return "n/a"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.2f}{suffix}{unit}"
    return f"{x:.0f}{unit}" if float(x).is_integer() else f"{x:.2f}{unit}"

def duration_ms(rec):
    v = num(rec.get("gpu__time_duration.sum"))
    if v is None:
        return None
    unit = units.get("gpu__time_duration.sum", "nsecond").strip().lower()
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "second": 1e3, "s": 1e3}
    return v * scale.get(unit, 1e-6)

STALL = [
    re.compile(r"^smsp__average_warp_latency_issue_stalled_(\w+?)(?:\.ratio|\.pct|$)"),
    re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$"),
    re.compile(r"^smsp__pcsamp_warps_issue_stalled_(\w+?)(?:\.sum)?$"),
]

for row in body:
    rec = dict(zip(head, row))
    g = lambda name: num(rec.get(name))
    name = rec.get("Kernel Name", "?")
    print(f"kernel       {name}")
    grid, block = rec.get("Grid Size") or rec.get("launch__grid_size", "?"), rec.get("Block Size") or rec.get("launch__block_size", "?")
    regs = rec.get("launch__registers_per_thread", "?")
    dyn = g("launch__shared_mem_per_block_dynamic")
    sta = g("launch__shared_mem_per_block_static")
    print(f"launch       grid {grid} x block {block}, {regs} registers/thread, shared memory {dyn if dyn is None else int(dyn)} B dynamic + {sta if sta is None else int(sta)} B static")
    ms = duration_ms(rec)
    print(f"time         {ms:.4f} ms (one launch under the profiler, caches flushed)" if ms is not None else "time         n/a")
    hmma = g("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    gmma = g("sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active")
    parts = []
    if hmma is not None:
        parts.append(f"HMMA (mma.sync) {hmma:.1f}%")
    if gmma is not None:
        parts.append(f"GMMA (wgmma) {gmma:.1f}%")
    print("tensor pipe  " + (", ".join(parts) + " of peak cycles while SMs are active" if parts else "n/a"))
    for op, what in (("ld", "loads "), ("st", "stores")):
        inst = g(f"smsp__sass_inst_executed_op_shared_{op}.sum")
        wave = g(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        ideal = g(f"smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        conf = g(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
        ratio = f" ({wave / ideal:.2f}x ideal)" if wave is not None and ideal else ""
        print(f"smem {what}  {fmt(inst)} {'LDS' if op == 'ld' else 'STS'} instructions, {fmt(wave)} wavefronts, ideal {fmt(ideal)}{ratio}, {fmt(conf)} bank conflicts")
    ldsm = g("smsp__sass_inst_executed_op_ldsm.sum")
    if ldsm is None:
        ldsm = g("smsp__inst_executed_op_ldsm.sum")
    wave = g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    ideal = g("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") or 0.0
    if ldsm and wave is not None:
        # The "ideal" above counts LDS only; what is left of the load wavefronts is ldmatrix's.
        per = (wave - ideal) / ldsm
        print(f"ldmatrix     {fmt(ldsm)} instructions, {per:.1f} wavefronts each (conflict-free: 4 for .x4, 2 for .x2, 1 for .x1)")
    else:
        print(f"ldmatrix     {fmt(ldsm)} instructions")
    occ = g("sm__warps_active.avg.pct_of_peak_sustained_active")
    theo = g("sm__maximum_warps_per_active_cycle_pct")
    print(f"occupancy    achieved {fmt(occ)}% of the SM's warp slots" + (f" (theoretical {theo:.1f}%)" if theo is not None else ""))
    dram = g("dram__throughput.avg.pct_of_peak_sustained_elapsed")
    smt = g("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    issue = g("smsp__issue_active.avg.pct_of_peak_sustained_active")
    print(f"throughput   DRAM {fmt(dram)}% of peak, SM {fmt(smt)}% of peak, issue slots busy {fmt(issue)}%")
    stalls = {}
    for key, value in rec.items():
        for pat in STALL:
            m = pat.match(key)
            v = num(value)
            if m and v is not None and m.group(1) != "selected":
                reason = m.group(1)
                if reason not in stalls:
                    stalls[reason] = (v, pat.pattern)
                break
    top = sorted(stalls.items(), key=lambda kv: -kv[1][0])[:5]
    if top:
        total = sum(v for v, _ in stalls.values())
        shown = ", ".join(f"{r} {v:.2f}" for r, (v, _) in top)
        print(f"top stalls   {shown} (warp cycles per issued instruction, of {total:.2f} stalled; ncu's WarpStateStats)")
    else:
        print("top stalls   n/a (no WarpStateStats metrics in this export)")
    print()
PY
}

find_ncu() {
    local c
    for c in "${NCU:-}" "$(command -v ncu || true)" "${CUDA_HOME:+$CUDA_HOME/bin/ncu}" \
             /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
        if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
    done
    # Like sanitize.sh and sass.sh: name what is missing and where it usually lives.
    echo "ncu.sh: Nsight Compute (ncu) not found: set NCU=/path/to/ncu, or install Nsight Compute (it comes with the CUDA toolkit, in \$CUDA_HOME/bin or /opt/nvidia/nsight-compute/<version>; the pip toolchain in .toolchain has none). GPU machines with the toolkit have it." >&2
    return 1
}

[ $# -ge 1 ] || usage
case "$1" in
    -h|--help) usage ;;
    --summarize)
        [ $# -eq 2 ] && [ -r "$2" ] || { echo "ncu.sh: --summarize needs a readable CSV file" >&2; exit 2; }
        summarize "$2"; exit ;;
esac
n="$1"; shift
[[ "$n" =~ ^[0-9]+$ ]] || { echo "ncu.sh: the stage must be a number, not '$n'" >&2; exit 2; }
flashlab="$here/flashlab"
[ -x "$flashlab" ] || { echo "ncu.sh: no flashlab next to this script ($flashlab)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "ncu.sh: python3 is needed for the summary" >&2; exit 2; }
ncu="$(find_ncu)" || exit 2
shape=("$@")
[ ${#shape[@]} -gt 0 ] || shape=(--batch 1 --heads 16 --seqlen 4096 --dim 128)

# Only metrics this ncu knows for this GPU: an unknown name makes ncu refuse to run.
known="$("$ncu" --query-metrics 2>/dev/null | awk '{print $1}' || true)"
metrics=()
for m in "${WANTED[@]}"; do
    if [ -z "$known" ] || grep -qx "${m%%.*}" <<<"$known"; then metrics+=("$m"); fi
done
list="$(IFS=,; echo "${metrics[*]}")"

out_dir="${NCU_OUT:-.}"; mkdir -p "$out_dir"
report="$out_dir/ncu-stage-$n"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
echo "ncu.sh: profiling stage $n (${shape[*]}), each kernel once; report $report.ncu-rep" >&2
if ! "$ncu" --clock-control none --target-processes all --launch-count 32 \
        --section WarpStateStats --metrics "$list" -f -o "$report" \
        "$flashlab" stage "$n" --no-time --no-check --seed 1 "${shape[@]}" > "$tmp/run.log" 2>&1; then
    cat "$tmp/run.log" >&2
    echo "ncu.sh: ncu failed (above). ERR_NVGPUCTRPERM means profiling needs root or NVreg_RestrictProfilingToAdminUsers=0" >&2
    exit 1
fi
grep -E "^==(WARNING|ERROR)==" "$tmp/run.log" >&2 || true
"$ncu" -i "$report.ncu-rep" --page raw --csv --print-units base > "$tmp/raw.csv"
cp "$tmp/raw.csv" "$out_dir/ncu-stage-$n.csv"
summarize "$tmp/raw.csv"
