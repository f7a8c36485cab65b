#!/usr/bin/env bash
# Call T3 (a fresh H200, carrying dist/gpu-a for its flashlab): stage 20's failed case of
# T2 replayed with its seed, then the same shape (and the per-head scales, and d128) with
# 100 fresh seeds each, counting the checks that fail and keeping their lines.
set -u
mkdir -p $OUT/t3
(cd dist/gpu-a && ./unpack.sh) || exit 1
F=dist/gpu-a/flashlab
shape=(--batch 1 --heads 2 --seqlen-q 1 --seqlen-k 257 --causal --no-time)
timeout -k 5 30 $F stage 20 "${shape[@]}" --dim 64 --fp8-scales tensor --seed 15877803243449587777 > $OUT/t3/replay.txt 2>&1
echo "replay exit $?"; grep -E "check|LSE" $OUT/t3/replay.txt | cut -c1-200
for cfg in "64 tensor" "64 head" "128 tensor"; do
  set -- $cfg; fails=0
  for i in $(seq 1 100); do
    timeout -k 5 20 $F stage 20 "${shape[@]}" --dim $1 --fp8-scales $2 > $OUT/t3/one.txt 2>&1 || { fails=$((fails+1)); grep -E "seed|check" $OUT/t3/one.txt >> $OUT/t3/fails-d$1-$2.txt; }
  done
  echo "d$1 scales $2: $fails of 100 failed"
done
head -c 3000 $OUT/t3/fails-d64-tensor.txt 2>/dev/null
cd $OUT && tar czf t3.tgz t3 && rm -rf t3
