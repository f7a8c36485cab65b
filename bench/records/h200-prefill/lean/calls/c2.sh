#!/usr/bin/env bash
# Call C2 (the same warm machine; the bundle stays from C1): FlashAttention-4's first part
# stashed; measured timelines at seqlen 8192, two blocks: stages 19 and 26 at d64, d128
# and d256, stages 20 and 27 at d128 and d64.
set -u
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu
mkdir -p $OUT/c2
for spec in "19 64" "26 64" "19 128" "26 128" "19 256" "26 256" "20 128" "27 128" "20 64" "27 64" "26 128 --causal"; do
  set -- $spec; s=$1; d=$2; c=${3:-}
  name=timeline-$s${c:+-causal}-d$d
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim $d $c --blocks 2 --out $OUT/c2/$name.svg --json $OUT/c2/$name.json > $OUT/c2/$name.txt 2>&1
  echo "$name exit $?: $(grep -E 'overhead' $OUT/c2/$name.txt | head -1)"
  grep -E "softmax|P·V|QK" $OUT/c2/$name.txt | head -3
done
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $OUT/c2
