#!/usr/bin/env bash
# Call L4: FlashAttention-4 installed; the whole prefill ladder, stages 1-13 and 16, at
# seqlen 4096 (stage 1's limit), d64 and d128, causal and not, with every baseline in the
# same run: the ladder at a glance.
set -u
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?"
. /tmp/fa4/env.sh
cd dist/flashlab-gpu && ./unpack.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
start=$(date +%s)
timeout -k 10 500 ./flashlab bench --stages 1,2,3,4,5,6,7,8,9,10,11,12,13,16 --seqlens 4096 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $OUT/ladder > $OUT/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| |^#" $OUT/ladder/results-table.md | cut -c1-260
rm -f $OUT/ladder/*.svg
