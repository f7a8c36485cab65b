#!/usr/bin/env bash
# Call Q2 (the warm H200 that calls W1-W6 left FlashAttention-4's first six wheel parts (of 7, --part-mib 16) on,
# carrying dist/fa4-part7 and dist/xa, flashlab of this commit): call Q1's question for
# FlashAttention-4, whose Python call is the longest: its rows after 2 s of warm-up one call
# at a time (--warmup calls, as in call M2 of ../2026-12-02-sustained-clocks/) and queued
# back to back (--warmup queued, now without a gate), each warm-up's duty printed; cuDNN
# queued and stage 26 beside them; nvidia-smi samples clock, power and temperature every 20 ms.
set -u
mkdir -p $OUT/q2
bash dist/fa4-part7/install-fa4.sh > $OUT/q2/fa4-install.txt 2>&1; echo "fa4 install exit $?: $(tail -1 $OUT/q2/fa4-install.txt | cut -c1-120)"
. /tmp/fa4/env.sh
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 20 > $OUT/q2/smi.csv 2>&1 &
smi=$!
sleep 2
S="--shape 1,16,4096,128 --shape 1,16,8192,128 --shape 1,16,16384,128 --shape 1,16,8192,64"
base() {  # backend mode round
  timeout -k 10 200 python3 bench/baselines.py --backends $1 $S --warmup-ms 2000 --warmup $2 2> >(stamp > $OUT/q2/warm-$1-$2-r$3.txt) | stamp > $OUT/q2/base-$1-$2-r$3.jsonl
}
s26() {
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 120 $F bench --stages 26 --seqlens 4096,8192,16384 --dims 128 --causal off --tokens 1 --out $OUT/q2/s26-r$1 2>&1 | stamp > $OUT/q2/s26-r$1.txt
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 60 $F bench --stages 26 --seqlens 8192 --dims 64 --causal off --tokens 1 --out $OUT/q2/s26-d64-r$1 2>&1 | stamp >> $OUT/q2/s26-r$1.txt
}
s26 1; base flash-attn-4 calls 1; base flash-attn-4 queued 1; base sdpa-cudnn queued 1
base flash-attn-4 queued 2; base flash-attn-4 calls 2; s26 2
kill $smi
python3 bench/experiments/2026-12-02-queued-warmup/clocks.py $OUT/q2 | tee $OUT/q2/clocks.md
for f in $OUT/q2/warm-*.txt; do echo "== $(basename $f)"; grep "warm-up:" $f | cut -d' ' -f2-; done
cd $OUT && tar czf q2.tgz q2 && rm -rf q2
