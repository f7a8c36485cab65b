#!/usr/bin/env bash
# Second call: stage 25 beside the variant that makes dQ's products and REDs before dV and
# dK (backward-dq-first.cu.txt), timed twice; and stage 25's main kernel at d128 (seqlen
# 8192) under Nsight Compute with its instruction counts and the warps' stall samples per
# SASS instruction, summed by opcode and listed for the top instructions. Writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-warp-tiles
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
common=(-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_BLOCK_Q=64 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128
  -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=99328 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864)
declare -A src=([25]=stages/25-backward-warp-tiles/kernels/backward.cu [dq-first]=$exp/backward-dq-first.cu.txt)
for v in 25 dq-first; do
  mkdir -p /tmp/wt-$v && cp ${src[$v]} /tmp/wt-$v/backward.cu && cp $exp/standalone.cu.txt /tmp/wt-$v/test.cu
  ( $nvcc "${common[@]}" -DKERNEL_FILE='"/tmp/wt-'$v'/backward.cu"' -o /tmp/wt-$v/test /tmp/wt-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
timeout 300 /tmp/wt-dq-first/test > $out/check-dq-first.txt 2>&1; echo "check dq-first exit $?: $(tail -n 1 $out/check-dq-first.txt)"
for round in 1 2; do for v in 25 dq-first; do
  timeout 120 /tmp/wt-$v/test time > $out/time-$v-$round.txt 2>&1
  echo "== $v round $round"; sed -E 's/^time //' $out/time-$v-$round.txt
done; done
timeout -k 10 200 $NCU --section SourceCounters --section InstructionStats --section WarpStateStats --import-source no -k regex:"^bwd_bf16_d128" -c 1 -o $out/ncu25 /tmp/wt-25/test time > $out/ncu25-run.txt 2>&1
echo "ncu exit $?"
timeout -k 10 60 $NCU --import $out/ncu25.ncu-rep --page details > $out/ncu25-details.txt 2>&1
grep -E "Executed Instructions  |Warp Cycles Per Issued|Issue Slots Busy|Duration" $out/ncu25-details.txt
timeout -k 10 60 $NCU --import $out/ncu25.ncu-rep --page source --csv --print-source sass > $out/ncu25-sass.csv 2>&1
echo "sass csv exit $?: $(wc -l < $out/ncu25-sass.csv) lines"
python3 - $out/ncu25-sass.csv <<'PY' | tee $out/stalls.txt
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
hdr = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
h = rows[hdr]
print("columns:", [c for c in h if "Sampl" in c or "Executed" in c][:12])
src = h.index("Source")
samp = next(i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All"))
exe = next((i for i, c in enumerate(h) if c == "Instructions Executed"), None)
by_op, by_op_exec, lines = collections.Counter(), collections.Counter(), []
for r in rows[hdr + 1:]:
    if len(r) <= samp: continue
    try: v = float(r[samp].replace(",", ""))
    except ValueError: continue
    op = r[src].strip().split()[0] if r[src].strip() else "?"
    if op.startswith("@"): op = r[src].strip().split()[1]
    op = op.split(".")[0]
    by_op[op] += v
    if exe is not None:
        try: by_op_exec[op] += float(r[exe].replace(",", ""))
        except ValueError: pass
    lines.append((v, r[src].strip()))
tot = sum(by_op.values())
print("stall samples in all:", tot)
for op, v in by_op.most_common(20): print(f"{op:10s} samples {v/tot*100:5.1f}%  executed {by_op_exec[op]:.0f}")
lines.sort(reverse=True)
for v, s in lines[:30]: print(f"{v/tot*100:5.2f}% {s}")
PY
rm -f $out/ncu25.ncu-rep
gzip -f $out/ncu25-sass.csv
