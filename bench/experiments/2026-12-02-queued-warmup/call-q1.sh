#!/usr/bin/env bash
# Call Q1 (a fresh H200, carrying dist/xa: flashlab of this commit, and bench/ with
# baselines.py's --warmup): is the higher clock a baseline held in call M2 of
# ../2026-12-02-sustained-clocks/ the GPU's idle time between its warm-up calls? cuDNN
# through SDPA after 2 s of warm-up one call at a time (--warmup calls, each waited for, as
# in M2) and after 2 s queued back to back (--warmup queued), beside stage 26 (flashlab's
# warm-up, one launch at a time); nvidia-smi samples clock, power and temperature every 20 ms.
# First, bench/profile/cudnn_once.py once (its once.py had not run on a GPU).
set -u
mkdir -p $OUT/q1
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
timeout -k 5 60 python3 bench/profile/cudnn_once.py 1024 128 > $OUT/q1/cudnn-once.txt 2>&1; echo "cudnn_once exit $?: $(tail -1 $OUT/q1/cudnn-once.txt)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/q1/gpu.txt
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 20 > $OUT/q1/smi.csv 2>&1 &
smi=$!
sleep 2
S="--shape 1,16,4096,128 --shape 1,16,8192,128 --shape 1,16,16384,128 --shape 1,16,8192,64"
cudnn() {
  timeout -k 10 150 python3 bench/baselines.py --backends sdpa-cudnn $S --warmup-ms 2000 --warmup $1 2> >(stamp > $OUT/q1/warm-$1-r$2.txt) | stamp > $OUT/q1/base-$1-r$2.jsonl
}
for round in 1 2; do
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 120 $F bench --stages 26 --seqlens 4096,8192,16384 --dims 128 --causal off --tokens 1 --out $OUT/q1/s26-r$round 2>&1 | stamp > $OUT/q1/s26-r$round.txt
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 60 $F bench --stages 26 --seqlens 8192 --dims 64 --causal off --tokens 1 --out $OUT/q1/s26-d64-r$round 2>&1 | stamp >> $OUT/q1/s26-r$round.txt
  if [ $round = 1 ]; then cudnn calls 1; cudnn queued 1; else cudnn queued 2; cudnn calls 2; fi
done
kill $smi
python3 bench/experiments/2026-12-02-queued-warmup/clocks.py $OUT/q1 | tee $OUT/q1/clocks.md
cat $OUT/q1/warm-*.txt | cut -c1-140
cd $OUT && tar czf q1.tgz q1 && rm -rf q1
