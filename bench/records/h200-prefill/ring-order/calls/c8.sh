#!/usr/bin/env bash
# Call C8 (the same machine if still warm; else it says FlashAttention-4 is missing): timed
# alike, 2 s of sustained load before each row, stages 26 and 29 (FLASHLAB_WARMUP_MS=2000)
# and FlashAttention-4 and cuDNN (baselines.py --warmup queued), d128 at seqlen
# 4096/8192/16384 and d64 at 8192, no mask; two rounds.
set -u
mkdir -p $OUT/c8
. /tmp/fa4/env.sh 2>/dev/null || echo "no FlashAttention-4 on this machine"
F=dist/xa/flashlab
[ -x $F ] || (cd dist/xa && ./unpack.sh)
S="--shape 1,16,4096,128 --shape 1,16,8192,128 --shape 1,16,16384,128 --shape 1,16,8192,64"
for r in 1 2; do
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 90 $F bench --stages 26,29 --seqlens 4096,8192,16384 --dims 128 --causal off --tokens 1 --out $OUT/c8/s-r$r > $OUT/c8/s-r$r.txt 2>&1
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 60 $F bench --stages 26,29 --seqlens 8192 --dims 64 --causal off --tokens 1 --out $OUT/c8/s64-r$r > $OUT/c8/s64-r$r.txt 2>&1
  for b in flash-attn-4 sdpa-cudnn; do
    timeout -k 10 120 python3 bench/baselines.py --backends $b $S --warmup-ms 2000 --warmup queued > $OUT/c8/base-$b-r$r.jsonl 2> $OUT/c8/warm-$b-r$r.txt
  done
  grep -hE "TFLOPS" $OUT/c8/s-r$r.txt $OUT/c8/s64-r$r.txt | grep -v "of light" | cut -c1-90
  cat $OUT/c8/base-*-r$r.jsonl | cut -c1-200
done
cd $OUT && tar czf c8.tgz c8 && rm -rf c8
