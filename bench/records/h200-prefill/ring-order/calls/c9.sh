#!/usr/bin/env bash
# Call C9 (a fresh H200 after C2'-C6' stashed FlashAttention-4's parts 1-6; carrying dist/xa
# and the last part): the prefill ladder at a glance with stage 29 on it, every prefill
# stage at seqlen 4096 beside FlashAttention-2, cuDNN and FlashAttention-4 (the run of
# bench/records/h200-prefill/ladder/, remade).
set -u
bash dist/fa4-part7/install-fa4.sh 2>&1 | tail -1
. /tmp/fa4/env.sh
cd dist/xa && ./unpack.sh
mkdir -p $OUT/c9
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/c9/gpu.txt
start=$(date +%s)
timeout -k 10 300 ./flashlab bench --stages 1,2,3,4,5,6,7,8,9,10,11,17,12,13,16,18,19,26,29 --seqlens 4096 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $OUT/c9/ladder > $OUT/c9/bench.txt 2>&1
echo "ladder exit $? in $(( $(date +%s) - start )) s"
grep -E "TFLOPS" $OUT/c9/bench.txt | grep -v "of light" | sed -E 's/^\[[a-z]+ [0-9]+\/[0-9]+\] //' | cut -c1-100 | tail -30
tar czf $OUT/c9.tgz -C $OUT c9 && rm -rf $OUT/c9
