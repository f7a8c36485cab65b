#!/usr/bin/env bash
# Session 8, call C: profiles. Stage 22's main kernel (d64, d128) beside SDPA's FlashAttention-2
# backward kernel (the same shapes), and stage 20's kernel at d128 and d256.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/c
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/c/gpu.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SECT=(--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis)
MET=--metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__inst_executed_pipe_lsu.sum,smsp__inst_executed_op_ldsm.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__t_sectors_op_red.sum,sm__cycles_elapsed.avg
for d in 64 128; do
  timeout -k 10 120 $NCU "${SECT[@]}" $MET -k regex:"^bwd_bf16_d" -c 1 ./flashlab stage 22 --batch 1 --heads 16 --seqlen 4096 --dim $d --no-time --no-check > $OUT/c/ncu22-d$d.txt 2>&1
  echo "ncu 22 d$d exit $?"
done
cat > /tmp/fa2.py <<'PY'
import sys, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
d = int(sys.argv[1])
q, k, v = (torch.randn(1, 16, 4096, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    o = F.scaled_dot_product_attention(q, k, v)
    o.backward(torch.randn_like(o))
torch.cuda.synchronize()
PY
for d in 64 128; do
  timeout -k 10 150 $NCU "${SECT[@]}" $MET -k regex:"flash_bwd_dq_dk_dv" -c 1 python3 /tmp/fa2.py $d > $OUT/c/ncu-fa2-d$d.txt 2>&1
  echo "ncu fa2 d$d exit $?"
done
for d in 128 256; do
  timeout -k 10 120 $NCU "${SECT[@]}" $MET -k regex:"^fp8_bf16_d" -c 1 ./flashlab stage 20 --batch 1 --heads 16 --seqlen 8192 --dim $d --no-time --no-check > $OUT/c/ncu20-d$d.txt 2>&1
  echo "ncu 20 d$d exit $?"
done
for f in $OUT/c/ncu*.txt; do echo "== $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Eligible Warps|hmma_cycles|gmma_cycles|wavefronts_mem_shared|bank_conflicts|op_ldsm|Dynamic Shared|Block Limit Reg|Block Limit Shared|Stall" $f | head -30; done
cd $root
tar czf $OUT/c.tgz -C $OUT c && rm -rf $OUT/c
