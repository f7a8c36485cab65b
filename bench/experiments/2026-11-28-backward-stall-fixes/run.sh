#!/usr/bin/env bash
# Stage 25 as committed (ad90775) beside the two stall fixes the profile beside
# FlashAttention-2 points at (../2026-11-28-backward-stalls-beside-fa2/): the row terms
# converted where they are stored, and dQ's four row addresses taken apart with no branch;
# each built into the standalone harness, checked against its CPU backward, timed twice.
# Run from the repository root on the GPU machine; writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-stall-fixes
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
common=(-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Xptxas=-v -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128
  -DFLASHLAB_HOST_BLOCK_Q_D64=128 -DFLASHLAB_HOST_BLOCK_Q_D128=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=165888 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864)
read -ra vs <<< "${VS:-25 a-row-terms-late b-dq-rows c-both}"
for v in "${vs[@]}"; do
  mkdir -p /tmp/sf-$v && cp $exp/standalone.cu.txt /tmp/sf-$v/test.cu
  if [ $v = 25 ]; then cp stages/25-backward-warp-tiles/kernels/backward.cu /tmp/sf-$v/backward.cu; else cp $exp/backward-$v.cu.txt /tmp/sf-$v/backward.cu; fi
  ( $nvcc "${common[@]}" -DKERNEL_FILE='"/tmp/sf-'$v'/backward.cu"' -o /tmp/sf-$v/test /tmp/sf-$v/test.cu > $out/build-$v.txt 2>&1; echo "build $v exit $?" ) &
done
wait
for v in "${vs[@]}"; do timeout 120 /tmp/sf-$v/test > $out/check-$v.txt 2>&1; echo "check $v exit $?: $(tail -n 1 $out/check-$v.txt)"; done
for round in 1 2; do for v in "${vs[@]}"; do
  timeout 120 /tmp/sf-$v/test time > $out/time-$v-$round.txt 2>&1
done; done
# One line per shape: TFLOP/s of each variant, rounds 1 and 2.
printf "%-34s" shape; for v in "${vs[@]}"; do printf "%16s" "$v"; done; echo
while read -r shape; do
  printf "%-34s" "$shape"
  for v in "${vs[@]}"; do
    a=$(grep -F "$shape:" $out/time-$v-1.txt | grep -oE "[0-9.]+ TFLOPS" | cut -d' ' -f1)
    b=$(grep -F "$shape:" $out/time-$v-2.txt | grep -oE "[0-9.]+ TFLOPS" | cut -d' ' -f1)
    printf "%16s" "$a/$b"
  done; echo
done < <(sed -E 's/^time (.*): pre.*/\1/' $out/time-25-1.txt)
# The stall reasons of the committed kernel and of c, under Nsight Compute (seqlen 4096, no
# mask), beside FlashAttention-2's of ../2026-11-28-backward-stalls-beside-fa2/.
[ "${NCU_TOO:-1}" = 1 ] || exit 0
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
MET="--metrics regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum"
for v in 25 c-both; do for dd in 128 64; do
  timeout -k 10 100 $NCU $MET -k regex:"^bwd_bf16_d$dd" -c 1 --csv --page raw /tmp/sf-$v/test one $dd > $out/ncu-$v-d$dd.csv 2>&1
  echo "ncu $v d$dd exit $?"
done; done
python3 - $out <<'PY'
import csv, sys, os
out = sys.argv[1]
def raw(p):
    rows = [r for r in csv.reader(open(p)) if len(r) > 5]
    h = next(i for i, r in enumerate(rows) if "ID" in r)
    return dict(zip(rows[h], rows[h + 2]))
for dd in (128, 64):
    a, c = raw(f"{out}/ncu-25-d{dd}.csv"), raw(f"{out}/ncu-c-both-d{dd}.csv")
    print(f"== d{dd}: stage 25 | c")
    for k in sorted(a):
        if k.startswith("smsp__average_warps_issue_stalled_") or k in ("gpu__time_duration.sum", "smsp__inst_executed.sum") or "hmma" in k:
            try:
                if max(float(a[k]), float(c[k])) < 0.02: continue
            except ValueError: pass
            print(f"  {k.replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', ''):60s} {a[k]:>16s} {c[k]:>16s}")
PY
