#!/usr/bin/env bash
# Call W1 (a fresh H200, carrying dist/xa: flashlab built with the variant stages 29-32 of
# variant.cu.txt (see README.md) beside stage 26): the bench of stage 26 and the four variants at d64
# and d128, seqlen 4096-16384, causal and not, in two rounds of opposite order (per shape
# the bench runs the stages in the order --stages gives), then the timelines of stages 26,
# 30 and 31 at d128, seqlen 8192.
set -u
mkdir -p $OUT/w1
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/w1/gpu.txt
for round in 1 2; do
  order=26,29,30,31,32; [ $round = 2 ] && order=32,31,30,29,26
  start=$(date +%s)
  timeout -k 10 200 $F bench --stages $order --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/w1/bench-r$round > $OUT/w1/bench-r$round.txt 2>&1
  echo "round $round exit $? in $(( $(date +%s) - start )) s"
done
for n in 26 30 31; do
  timeout -k 5 60 $F timeline $n --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/w1/timeline-$n-d128.svg --json $OUT/w1/timeline-$n-d128.json > $OUT/w1/timeline-$n-d128.txt 2>&1
  echo "timeline $n exit $?"; grep -E "consumer|producer" $OUT/w1/timeline-$n-d128.txt | cut -c1-100
done
cd $OUT && tar czf w1.tgz w1 && rm -rf w1
