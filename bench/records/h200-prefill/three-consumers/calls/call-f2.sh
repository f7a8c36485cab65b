#!/usr/bin/env bash
# Call F2 (a fresh H200, carrying dist/x28, as call F1, and dist/cudnn-frontend): the wave
# count put to the test, stages 27 and 28 at seqlens whose blocks of 192 rows fill their
# last round about as well as blocks of 128 do (12288) or worse (8448); then Nsight Compute
# on stages 27 and 28 and on cuDNN's FP8 attention at d128, seqlen 16384, no mask.
set -u
root=$(pwd)
mkdir -p $OUT/f2
(cd dist/x28 && ./unpack.sh) || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/f2/gpu.txt
cd dist/x28
show() { grep -E "TFLOPS" $1 | grep -v "of light" | sed -E 's/^\[[a-z]+ [0-9]+\/[0-9]+\] //' | cut -c1-100; }
for order in 27,28 28,27; do
  start=$(date +%s)
  timeout -k 10 70 ./flashlab bench --stages $order --seqlens 8448,12288 --dims 64,128 --causal off --tokens 1 --out $OUT/f2/waves-$order > $OUT/f2/waves-$order.txt 2>&1
  echo "waves $order exit $? in $(( $(date +%s) - start )) s"; show $OUT/f2/waves-$order.txt
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SECTIONS="--section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section SchedulerStats --section ComputeWorkloadAnalysis"
for s in 27 28; do
  k=wide_keys; [ $s = 28 ] && k=three_consumers
  start=$(date +%s)
  timeout -k 10 120 $NCU --clock-control none --kernel-name regex:"^${k}_bf16_d128$" --launch-count 1 $SECTIONS -f -o $OUT/f2/ncu-$s ./flashlab stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 16384 --dim 128 > $OUT/f2/ncu-$s.log 2>&1
  echo "ncu $s exit $? in $(( $(date +%s) - start )) s"
  $NCU -i $OUT/f2/ncu-$s.ncu-rep --page raw --csv --print-units base > $OUT/f2/ncu-$s-raw.csv 2>/dev/null
  $NCU -i $OUT/f2/ncu-$s.ncu-rep --page details --csv --print-units base > $OUT/f2/ncu-$s-details.csv 2>/dev/null
  rm -f $OUT/f2/ncu-$s.ncu-rep
done
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/f2/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
timeout -k 10 150 $NCU --clock-control none --kernel-name regex:"(sdpa|fmha|fprop|flash|attn|attention)" --launch-skip 1 --launch-count 1 $SECTIONS -f -o $OUT/f2/ncu-cudnn python3 $root/bench/baselines.py --shape 1,16,16384,128,e4m3 --backends cudnn-fp8 --warmup-ms 0 --target-ms 1 --min-iters 2 --max-iters 2 --out $OUT/f2/cudnn-rows.jsonl > $OUT/f2/ncu-cudnn.log 2>&1
echo "ncu cudnn exit $? in $(( $(date +%s) - start )) s: $(grep -E '==PROF==|Kernel|kernel' $OUT/f2/ncu-cudnn.log | tail -3 | cut -c1-200)"
$NCU -i $OUT/f2/ncu-cudnn.ncu-rep --page raw --csv --print-units base > $OUT/f2/ncu-cudnn-raw.csv 2>/dev/null
$NCU -i $OUT/f2/ncu-cudnn.ncu-rep --page details --csv --print-units base > $OUT/f2/ncu-cudnn-details.csv 2>/dev/null
rm -f $OUT/f2/ncu-cudnn.ncu-rep
for f in 27 28 cudnn; do
  python3 - $OUT/f2/ncu-$f-details.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = ("Duration", "Issue Slots Busy", "Issued Warp Per Scheduler", "No Eligible", "Compute (SM) Throughput", "Registers Per Thread", "Grid Size", "Block Size", "Achieved Occupancy", "Warp Cycles Per Issued Instruction", "Executed Ipc Active")
seen = set()
for r in rows:
    n = r.get("Metric Name", "")
    if n in want and n not in seen:
        seen.add(n); print(sys.argv[1].split("/")[-1], r.get("Kernel Name", "")[:40], n, r.get("Metric Value", ""), r.get("Metric Unit", ""))
PY
done
cd $OUT && tar czf f2.tgz f2 && rm -rf f2
