#!/usr/bin/env bash
# Call B2: the backward bench of stage 22 at d64 and d128, seqlen 4096 to 16384, causal and
# not, with SDPA's flash, cuDNN and efficient backward in the same run.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/b2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/b2/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/b2/gpu.txt
timeout -k 10 500 ./flashlab bench --backward --stages 22 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 --baselines --plots --out $OUT/b2/bench > $OUT/b2/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\||^####|failed|skipped" $OUT/b2/bench.txt | cut -c1-170
tar czf $OUT/b2.tgz -C $OUT b2 && rm -rf $OUT/b2
