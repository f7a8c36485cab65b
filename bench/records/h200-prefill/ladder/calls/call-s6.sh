#!/usr/bin/env bash
# Call S6 (the same warm machine, FlashAttention-4 installed by S5): the whole prefill
# ladder at seqlen 4096 (stage 1's limit), d64 and d128, causal and not, with every
# baseline in the same run: the ladder at a glance.
set -u
. /tmp/fa4/env.sh
cd dist/flashlab-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
start=$(date +%s)
timeout -k 10 400 ./flashlab bench --stages 1,2,3,4,5,6,7,8,9,10,11,17,12,13,16,18,19 --seqlens 4096 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $OUT/ladder > $OUT/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| |^#" $OUT/ladder/results-table.md | cut -c1-260
rm -f $OUT/ladder/*.svg
tar czf $OUT/ladder.tgz -C $OUT ladder bench.txt gpu.txt && rm -rf $OUT/ladder
