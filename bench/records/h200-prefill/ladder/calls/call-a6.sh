#!/usr/bin/env bash
# Call A6 (the same warm machine, carrying the GPU bundle; FlashAttention-4 installed by A2-A5):
# the whole prefill ladder with stage 26 at seqlen 4096 (stage
# 1's limit), d64 and d128, causal and not, with every baseline in the same run.
set -u
. /tmp/fa4/env.sh
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/ladder26
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/ladder26/gpu.txt
start=$(date +%s)
timeout -k 10 400 ./flashlab bench --stages 1,2,3,4,5,6,7,8,9,10,11,17,12,13,16,18,19,26 --seqlens 4096 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $OUT/ladder26/ladder > $OUT/ladder26/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| |^#" $OUT/ladder26/ladder/results-table.md | cut -c1-260
rm -f $OUT/ladder26/ladder/*.svg
tar czf $OUT/ladder26.tgz -C $OUT ladder26 && rm -rf $OUT/ladder26
