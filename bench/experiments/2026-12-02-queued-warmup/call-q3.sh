#!/usr/bin/env bash
# Call Q3 (a fresh H200, carrying dist/xa): the queued warm-up in batches (after call Q2)
# run on a GPU, cuDNN at d128 4096 and 8192 both ways, and stage 26 at 4096, with
# nvidia-smi sampling the clock, power and the clock's event (throttle) reasons every 20 ms.
set -u
mkdir -p $OUT/q3
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 20 > $OUT/q3/smi.csv 2>&1 &
smi=$!
sleep 2
S="--shape 1,16,4096,128 --shape 1,16,8192,128"
for m in queued calls; do
  timeout -k 10 100 python3 bench/baselines.py --backends sdpa-cudnn $S --warmup-ms 2000 --warmup $m 2> >(stamp > $OUT/q3/warm-sdpa-cudnn-$m-r1.txt) | stamp > $OUT/q3/base-sdpa-cudnn-$m-r1.jsonl
done
FLASHLAB_WARMUP_MS=2000 timeout -k 10 60 $F bench --stages 26 --seqlens 4096 --dims 128 --causal off --tokens 1 --out $OUT/q3/s26-r1 2>&1 | stamp > $OUT/q3/s26-r1.txt
kill $smi
python3 bench/experiments/2026-12-02-queued-warmup/clocks.py $OUT/q3 | tee $OUT/q3/clocks.md
for f in $OUT/q3/warm-*.txt; do echo "== $(basename $f)"; grep "warm-up:" $f | cut -d' ' -f2-; done
# The clock's event reasons while loaded (above 450 W), counted.
awk -F', ' '$3+0 > 450 {print $5}' $OUT/q3/smi.csv | sort | uniq -c
cd $OUT && tar czf q3.tgz q3 && rm -rf q3
