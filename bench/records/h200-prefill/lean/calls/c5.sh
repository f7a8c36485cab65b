#!/usr/bin/env bash
# Call C5 (the same warm machine; carrying FlashAttention-4's last part and the cuDNN
# frontend's wheel): both installed; the bf16 run of record, stages 13, 16, 19 and 26 with
# every baseline (FlashAttention-2, cuDNN, FlashAttention-4); then the FP8 one, stages 19,
# 20 and 27 with cuDNN's FP8 attention and SDPA's answer to e4m3 inputs.
set -u
root="$(pwd)"
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?"; tail -n 1 $OUT/fa4-install.txt
bash dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/fa4/env.sh; . /tmp/cudnn-fe/env.sh
cd dist/flashlab-gpu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader > $OUT/gpu.txt
start=$(date +%s)
timeout -k 10 270 ./flashlab bench --stages 13,16,19,26 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --baselines --plots --out $OUT/record > $OUT/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| |^#" $OUT/record/results-table.md | cut -c1-250 | head -40
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8,sdpa-fp8 timeout -k 10 270 ./flashlab bench --stages 19,20,27 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --baselines --plots --out $OUT/fp8 > $OUT/bench-fp8.txt 2>&1
echo "fp8 bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| |^#" $OUT/fp8/results-table.md | cut -c1-250 | head -40
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >> $OUT/gpu.txt
tar czf $OUT/record.tgz -C $OUT record fp8 bench.txt bench-fp8.txt gpu.txt fa4-install.txt cudnn-fe-install.txt && rm -rf $OUT/record $OUT/fp8
