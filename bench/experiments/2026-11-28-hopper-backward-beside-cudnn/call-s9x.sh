#!/usr/bin/env bash
# Session 9, call X: where stage 23 loses to cuDNN at d128 causal seqlen 16384 (the shape
# behind in every run): Nsight Compute on stage 23's main kernel and on cuDNN's backward
# kernels (SDPA's cuDNN backend) with the same metrics, and stage 23's timeline there.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/x
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/x/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/x/gpu.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
MET=gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_red.sum,smsp__inst_executed.sum
timeout -k 10 100 $NCU --metrics $MET -k regex:"^bwd_" -c 3 ./flashlab stage 23 --batch 1 --heads 16 --seqlen 16384 --dim 128 --causal --no-check --no-time > $OUT/x/ncu-23.txt 2>&1
echo "ncu 23 exit $?"
cat > /tmp/cudnn_bwd.py <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = ((torch.randn(1, 16, 16384, 128, device="cuda") + 0.5).to(torch.bfloat16).requires_grad_() for _ in range(3))
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    o.backward(torch.randn_like(o))
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
PY
timeout -k 10 150 $NCU --profile-from-start off --metrics $MET -c 6 python3 /tmp/cudnn_bwd.py > $OUT/x/ncu-cudnn.txt 2>&1
echo "ncu cudnn exit $?"
for f in $OUT/x/ncu-23.txt $OUT/x/ncu-cudnn.txt; do echo "== $(basename $f)"; grep -E "^  [a-zA-Z_].*\(|gpu__time|gmma|issue_active|registers|grid_size|block_size|shared_mem|dram__|lts__t|lts__th|inst_executed" $f | cut -c1-150; done
timeout -k 5 60 ./flashlab timeline 23 --batch 1 --heads 16 --seqlen 16384 --dim 128 --causal --blocks 2 --out $OUT/x/timeline-23causal-16384.svg --json $OUT/x/timeline-23causal-16384.json > $OUT/x/timeline-23causal-16384.txt 2>&1
echo "timeline exit $?"; sed -n '/^phases/,/^wrote/p' $OUT/x/timeline-23causal-16384.txt
cd $root
tar czf $OUT/x.tgz -C $OUT x && rm -rf $OUT/x
