#!/usr/bin/env bash
# Call R2 (the same warm machine): FlashAttention-4's second part stashed; compute-sanitizer
# of the Hopper stages; the measured timelines (d128 seqlen 8192 on an H200; 13 and 16
# causal and at d64 too; stage 18 at d256).
set -u
bash dist/fa4-part2/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/r2/timelines
for n in 10 11 17 12 13 16 18; do
  start=$(date +%s)
  timeout -k 10 100 ./sanitize.sh $n > $OUT/r2/sanitize$n.txt 2>&1
  echo "sanitize $n exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/r2/sanitize$n.txt)"
done
for spec in "11 128" "17 128" "12 128" "13 128" "16 128" "13 128 --causal" "16 128 --causal" "13 64" "16 64" "18 256"; do
  set -- $spec; s=$1; d=$2; c=${3:-}
  name=timeline-$s${c:+-causal}; [ "$d" = 64 ] && name=$name-d64; [ "$d" = 256 ] && name=$name-d256
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim $d $c --blocks 2 --out $OUT/r2/timelines/$name.svg --json $OUT/r2/timelines/$name.json > $OUT/r2/timelines/$name.txt 2>&1
  echo "$name exit $?: $(grep -E 'overhead' $OUT/r2/timelines/$name.txt | head -1)"
done
tar czf $OUT/r2.tgz -C $OUT r2 && rm -rf $OUT/r2
