#!/usr/bin/env bash
# Call W2 (a fresh H200, carrying dist/xa: flashlab built with the variant stages 29-32 of
# variant.cu.txt (see README.md) beside stage 26, 32 now the combined variant): stages 26, 30 and 32 at
# d64 and d128, seqlen 4096-16384, causal and not, in four rounds of different orders, then
# the timeline of stage 32 at d128, seqlen 8192.
set -u
mkdir -p $OUT/w2
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/w2/gpu.txt
for round in 1 2 3 4; do
  case $round in 1) order=26,30,32;; 2) order=32,30,26;; 3) order=30,32,26;; 4) order=26,32,30;; esac
  start=$(date +%s)
  timeout -k 10 110 $F bench --stages $order --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/w2/bench-r$round > $OUT/w2/bench-r$round.txt 2>&1
  echo "round $round exit $? in $(( $(date +%s) - start )) s"
done
for n in 32; do
  timeout -k 5 60 $F timeline $n --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/w2/timeline-$n-d128.svg --json $OUT/w2/timeline-$n-d128.json > $OUT/w2/timeline-$n-d128.txt 2>&1
  echo "timeline $n exit $?"; grep -E "consumer|producer" $OUT/w2/timeline-$n-d128.txt | cut -c1-100
done
cd $OUT && tar czf w2.tgz w2 && rm -rf w2
