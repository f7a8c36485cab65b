#!/usr/bin/env bash
# Call H2 (prepared, not run): the bench of stages 19, 20 and 21 at head dims 64, 128 and 256
# with cuDNN's FP8 attention (the cuDNN frontend's wheel, dist/cudnn-frontend) in the same run.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/h2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/h2/gpu.txt
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/h2/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
start=$(date +%s)
FLASHLAB_BASELINES_BACKENDS=default,cudnn-fp8,sdpa-fp8 timeout -k 10 540 ./flashlab bench --stages 19,20,21 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --baselines --out $OUT/h2/bench > $OUT/h2/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"; grep -E "^\| [0-9]|^####|speed of light" $OUT/h2/bench.txt | cut -c1-170 | head -80
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/h2/gpu.txt
cd $root
tar czf $OUT/h2.tgz -C $OUT h2 && rm -rf $OUT/h2
