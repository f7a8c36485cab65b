#!/usr/bin/env bash
# Stage 25's main kernel (as committed, ad90775, in the standalone harness) and SDPA's
# FlashAttention-2 backward kernel, side by side under Nsight Compute at bf16, batch 1, 16
# heads, seqlen 4096, d64 and d128, no mask: the stall reasons per issued instruction
# (WarpStateStats), and per SASS opcode the instructions executed and the stall samples
# (SourceCounters). Run from the repository root on the GPU machine; writes into $1.
set -u
out="$1"; mkdir -p "$out"
exp=bench/experiments/2026-11-28-backward-stalls-beside-fa2
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p /tmp/sb && cp stages/25-backward-warp-tiles/kernels/backward.cu /tmp/sb/backward.cu && cp $exp/standalone.cu.txt /tmp/sb/test.cu
# The standalone harness, with one more mode: "one D" runs the d64 or d128 backward once at seqlen 4096.
python3 - /tmp/sb/test.cu <<'PY'
import sys; p = sys.argv[1]; s = open(p).read()
s = s.replace('    if (argc > 1 && !strcmp(argv[1], "time")) {', '''    if (argc > 2 && !strcmp(argv[1], "one")) {
        if (atoi(argv[2]) == 64) time_case<__nv_bfloat16, 64>(1, 16, 16, 4096, false, 0);
        else time_case<__nv_bfloat16, 128>(1, 16, 16, 4096, false, 0);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "time")) {''', 1)
open(p, "w").write(s)
PY
$nvcc -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -I kernel-headers/include -gencode=arch=compute_90a,code=sm_90a \
  -DFLASHLAB_HOST_NSTAGES=2 -DFLASHLAB_HOST_WARPS=8 -DFLASHLAB_HOST_BLOCK_KV=128 \
  -DFLASHLAB_HOST_PRE_ROWS=64 -DFLASHLAB_HOST_PRE_THREADS=128 -DFLASHLAB_HOST_POST_ROWS=64 -DFLASHLAB_HOST_POST_THREADS=128 \
  -DFLASHLAB_HOST_BLOCK_Q_D64=128 -DFLASHLAB_HOST_BLOCK_Q_D128=64 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D64=165888 -DFLASHLAB_HOST_MAIN_SMEM_BYTES_D128=164864 \
  -DKERNEL_FILE='"/tmp/sb/backward.cu"' -o /tmp/sb/test /tmp/sb/test.cu > $out/build.txt 2>&1
echo "build exit $?"
cat > /tmp/sb/fa2.py <<'PY'
import sys, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
d = int(sys.argv[1])
q, k, v = ((torch.randn(1, 16, 4096, d, device="cuda") + 0.5).to(torch.bfloat16).requires_grad_() for _ in range(3))
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    o = F.scaled_dot_product_attention(q, k, v)
    o.backward(torch.randn_like(o))
torch.cuda.synchronize()
PY
SECT=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --import-source no)
MET="--metrics regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum"
for d in 128 64; do
  timeout -k 10 150 $NCU "${SECT[@]}" $MET -k regex:"^bwd_bf16_d$d" -c 1 -o $out/s25-d$d /tmp/sb/test one $d > $out/ncu-run-25-d$d.txt 2>&1
  echo "ncu 25 d$d exit $?"
  timeout -k 10 150 $NCU "${SECT[@]}" $MET -k regex:"flash_bwd_dq_dk_dv" -c 1 -o $out/fa2-d$d python3 /tmp/sb/fa2.py $d > $out/ncu-run-fa2-d$d.txt 2>&1
  echo "ncu fa2 d$d exit $?"
done
for r in s25-d128 fa2-d128 s25-d64 fa2-d64; do
  [ -f $out/$r.ncu-rep ] || continue
  timeout -k 10 60 $NCU --import $out/$r.ncu-rep --page raw --csv > $out/$r-raw.csv 2>&1
  timeout -k 10 60 $NCU --import $out/$r.ncu-rep --page details > $out/$r-details.txt 2>&1
  timeout -k 10 60 $NCU --import $out/$r.ncu-rep --page source --csv --print-source sass > $out/$r-sass.csv 2>&1
done
python3 $exp/compare.py $out | tee $out/compare.txt
rm -f $out/*.ncu-rep
gzip -f $out/*-sass.csv $out/*-raw.csv
