#!/usr/bin/env bash
# Session 10, call E: stage 23 against cuDNN at d128, seqlen 4096, no mask, the one shape
# where the run of record and its repeats disagree (cuDNN 535, 555, 512 TFLOP/s): which
# kernel cuDNN runs in each of three processes and how long it takes under Nsight Compute,
# cuDNN's backward timed in three fresh processes (CUDA events, 50 runs after 10 warm-ups),
# and stage 23's kernels under Nsight Compute.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/e
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/e/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/e/gpu.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
MET=gpu__time_duration.sum,smsp__inst_executed.sum,launch__grid_size,smsp__issue_active.avg.pct_of_peak_sustained_active
cat > /tmp/cudnn_bwd.py <<'PY'
import sys, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
s = int(sys.argv[1]); mode = sys.argv[2]
q, k, v = ((torch.randn(1, 16, s, 128, device="cuda") + 0.5).to(torch.bfloat16).requires_grad_() for _ in range(3))
do = torch.randn(1, 16, s, 128, device="cuda", dtype=torch.bfloat16)
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    o = F.scaled_dot_product_attention(q, k, v)
    grad = lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    if mode == "ncu":
        grad(); torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart(); grad(); torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStop()
    else:
        for _ in range(10): grad()
        torch.cuda.synchronize()
        ts = []
        for _ in range(50):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); grad(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
        ts.sort(); med = ts[len(ts) // 2]
        flops = 2.5 * 4 * 16 * s * s * 128
        print(f"cudnn backward s{s}: median {med * 1e3:.1f} us, {flops / med / 1e9:.0f} TFLOP/s (min {ts[0] * 1e3:.1f}, max {ts[-1] * 1e3:.1f} us)")
PY
for s in 4096 8192; do for rep in 1 2 3; do
  timeout -k 5 60 python3 /tmp/cudnn_bwd.py $s time 2>&1 | tail -n 1 | tee -a $OUT/e/cudnn-times.txt
done; done
for rep in 1 2 3; do
  timeout -k 10 100 $NCU --profile-from-start off --metrics $MET python3 /tmp/cudnn_bwd.py 4096 ncu > $OUT/e/ncu-cudnn-$rep.txt 2>&1
  echo "ncu cudnn $rep exit $?"; grep -E "^  [a-zA-Z_].*\(|gpu__time" $OUT/e/ncu-cudnn-$rep.txt | cut -c1-150
done
timeout -k 10 100 $NCU --metrics $MET -k regex:"^bwd_" -c 3 ./flashlab stage 23 --batch 1 --heads 16 --seqlen 4096 --dim 128 --no-check --no-time > $OUT/e/ncu-23.txt 2>&1
echo "ncu 23 exit $?"; grep -E "^  [a-zA-Z_].*\(|gpu__time|inst_executed|issue_active" $OUT/e/ncu-23.txt | cut -c1-150
for rep in 1 2 3; do
  r=$(timeout -k 5 60 ./flashlab stage 23 --batch 1 --heads 16 --seqlen 4096 --dim 128 --no-check 2>&1 | grep -E "^speed")
  echo "stage 23 s4096 run $rep: $r" | tee -a $OUT/e/stage23-times.txt | cut -c1-100
done
cd $root
tar czf $OUT/e.tgz -C $OUT e && rm -rf $OUT/e
