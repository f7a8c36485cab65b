#!/usr/bin/env bash
# Call C1 (the warm H200 of A1 and B1-B4, which stashed FlashAttention-4's parts 1-6;
# carrying dist/fa4-part7): FlashAttention-4 installed; the prefill ladder at a glance with
# stage 29 on it (bench/records/h200-prefill/ladder/, remade); then Nsight Compute on stage
# 29 and FlashAttention-4 at d64, seqlen 8192 (bench/profile/side-by-side.sh).
set -u
bash dist/fa4-part7/install-fa4.sh 2>&1 | tail -1
. /tmp/fa4/env.sh
root=$PWD
mkdir -p $OUT/c1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/c1/gpu.txt
cd dist/xa
start=$(date +%s)
timeout -k 10 300 ./flashlab bench --stages 1,2,3,4,5,6,7,8,9,10,11,17,12,13,16,18,19,26,29 --seqlens 4096 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $OUT/c1/ladder > $OUT/c1/bench.txt 2>&1
echo "ladder exit $? in $(( $(date +%s) - start )) s"
python3 $root/bench/records/h200-prefill/loop-invariants/calls/ratio.py $OUT/c1/ladder/bench.json 26 29
start=$(date +%s)
FLASHLAB=$PWD/flashlab timeout -k 10 240 bash $root/bench/profile/side-by-side.sh $OUT/c1/profile-d64 29 8192 64 > $OUT/c1/profile-d64.txt 2>&1
echo "profile exit $? in $(( $(date +%s) - start )) s"
cd $OUT/c1/profile-d64 && rm -f *.ncu-rep && gzip -f *-sass.csv && cd $OUT
tar czf c1.tgz c1 && rm -rf c1
