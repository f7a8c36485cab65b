#!/usr/bin/env bash
# Call F2 (the same warm machine): FlashAttention-4's second part stashed; compute-sanitizer
# memcheck, racecheck and synccheck of the stages whose kernels changed.
set -u
bash dist/fa4-part2/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu && ./unpack.sh
for n in 10 11 12 13 16 15; do
  start=$(date +%s)
  timeout -k 10 150 ./sanitize.sh $n > $OUT/sanitize$n.txt 2>&1
  echo "sanitize $n exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/sanitize$n.txt)"
done
