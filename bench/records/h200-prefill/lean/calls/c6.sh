#!/usr/bin/env bash
# Call C6 (a fresh machine, carrying dist/lean2/: four flashlab binaries, xz-compressed):
# the GPU bundle's flashlab (CUDA 13.0, the pinned compiler), the same tree built with CUDA
# 13.4's nvcc (FlashAttention-4's ptxas generation), and two builds of stage 26 with the
# split of the exponentials moved (SPLIT an eighth, v8, and a half, v2, against the
# quarter). Two interleaved rounds of opposite order, then stages 19 and 26 at d128,
# seqlen 8192 six more times; every bench row is checked against the oracle before it is timed.
set -u
root=$(pwd)
mkdir -p $OUT/c6 /tmp/l && cd /tmp/l
for b in 130 134 v8 v2; do xz -dc $root/dist/lean2/flashlab-$b.xz > flashlab-$b && chmod +x flashlab-$b; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/c6/gpu.txt
for round in 1 2; do
  list="130 134 v8 v2"; [ $round = 2 ] && list="v2 v8 134 130"
  for b in $list; do
    stages=26; case $b in 130|134) stages=19,26 ;; esac
    start=$(date +%s)
    timeout -k 10 110 ./flashlab-$b bench --stages $stages --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/c6/bench-$b-r$round > $OUT/c6/bench-$b-r$round.txt 2>&1
    echo "bench $b round $round exit $? in $(( $(date +%s) - start )) s: $(grep -c ' ok$' $OUT/c6/bench-$b-r$round.txt) rows checked ok"
  done
done
# The point that moved most between runs (d128, seqlen 8192), three more times in each order.
for i in 1 2 3; do for order in 19,26 26,19; do
  timeout -k 10 60 ./flashlab-130 bench --stages $order --seqlens 8192 --dims 128 --causal both --tokens 1 --out $OUT/c6/rep-${order//,/-}-$i > $OUT/c6/rep-${order//,/-}-$i.txt 2>&1
  echo "repeat $order $i exit $?: $(grep -E 'TFLOPS' $OUT/c6/rep-${order//,/-}-$i.txt | grep -v 'of light' | sed -E 's/^.*(1[0-9]|2[0-9])-[a-z-]+ b1 h16 s8192 d128( causal)?: ([0-9.]+) TFLOPS.*/\1\2 \3/' | tr '\n' ' ')"
done; done
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
