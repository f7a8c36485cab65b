#!/usr/bin/env bash
# Call C7 (the same warm machine, after C2-C6 stashed FlashAttention-4's parts 2-6; dist/xa
# stays from C1): the last part, which installs FlashAttention-4; then the run of record,
# stages 26 and 29 with the baselines (FlashAttention-2, cuDNN and FlashAttention-4 through
# bench/baselines.py), and a second round of the pair alone in the other order.
set -u
bash dist/fa4-part7/install-fa4.sh 2>&1 | tail -2
. /tmp/fa4/env.sh
cd dist/xa
mkdir -p $OUT/c7
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/c7/gpu.txt
start=$(date +%s)
timeout -k 10 360 ./flashlab bench --stages 26,29 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --baselines --plots --out $OUT/c7/record > $OUT/c7/bench.txt 2>&1
echo "record exit $? in $(( $(date +%s) - start )) s"
grep -E "TFLOPS|skipped|baseline" $OUT/c7/bench.txt | grep -v "of light" | sed -E 's/^\[[a-z]+ [0-9]+\/[0-9]+\] //' | cut -c1-110 | tail -60
start=$(date +%s)
timeout -k 10 90 ./flashlab bench --stages 29,26 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/c7/pair > $OUT/c7/pair.txt 2>&1
echo "pair exit $? in $(( $(date +%s) - start )) s"
tar czf $OUT/c7.tgz -C $OUT c7 && rm -rf $OUT/c7
