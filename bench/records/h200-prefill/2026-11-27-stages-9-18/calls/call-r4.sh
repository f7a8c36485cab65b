#!/usr/bin/env bash
# Call R4 (the same warm machine): FlashAttention-4's last part, installed; the Hopper run
# of record: stages 9, 10, 11, 17, 12, 13, 16 and 18 at d64, d128 and d256 (stage 18 alone
# has d256), three lengths, causal and not, every baseline in the same run.
set -u
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?"; tail -n 1 $OUT/fa4-install.txt
. /tmp/fa4/env.sh
cd dist/flashlab-gpu && ./unpack.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
start=$(date +%s)
timeout -k 10 540 ./flashlab bench --stages 9,10,11,17,12,13,16,18 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --baselines --plots --out $OUT/record > $OUT/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -E "^\| |^#" $OUT/record/results-table.md | cut -c1-250 | head -70
tar czf $OUT/record.tgz -C $OUT record bench.txt gpu.txt fa4-install.txt && rm -rf $OUT/record
