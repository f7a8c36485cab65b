#!/usr/bin/env bash
# Call M3 (an H200, carrying dist/xc: the flashlab of the GPU bundle of c655d84; and
# dist/cudnn-frontend): stages 20, 24, 28 and 30 at d128, seqlen 4096-16384, causal and not,
# beside cuDNN's FP8 attention (and PyTorch's answer to e4m3) in the same run.
set -u
mkdir -p $OUT/m3
(cd dist/xc && ./unpack.sh) || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/m3/gpu.txt
bash dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/m3/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=cudnn-fp8,sdpa-fp8 timeout -k 10 400 dist/xc/flashlab bench --stages 20,24,28,30 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --baselines --out $OUT/m3/bench > $OUT/m3/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| [0-9]|^####" $OUT/m3/bench.txt | cut -c1-220 | head -20
cd $OUT && tar czf m3.tgz m3 && rm -rf m3
