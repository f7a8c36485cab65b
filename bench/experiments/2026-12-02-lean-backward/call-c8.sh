#!/usr/bin/env bash
# Call C8 (a fresh machine, the same dist/lb/): two more rounds of C7's bench, base and
# variant alternating; the text of each bench only (the device time left allowed no more).
set -u
mkdir -p $OUT/c8
(cd dist/lb/var && ./unpack.sh) && (cd dist/lb/base && ./unpack.sh) || exit 1
for round in 3 4; do
  order="base var"; [ $round = 4 ] && order="var base"
  for who in $order; do
    timeout -k 5 40 dist/lb/$who/flashlab bench --backward --stages 23 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 > $OUT/c8/bench-$who-r$round.txt 2>&1
    echo "bench $who round $round exit $?"
  done
done
