#!/usr/bin/env bash
# Call F3 (a fresh H200, carrying dist/x28): the commands chapter 28 gives a reader, as a
# reader runs them: the stage at its defaults and at d64, the exercise's compare at seqlen
# 8192 and 8448, and a timeline with its JSON.
set -u
mkdir -p $OUT/f3
(cd dist/x28 && ./unpack.sh) || exit 1
cd dist/x28
for cmd in "stage 28" "stage 28 --dim 64 --causal" "compare 27 28 --dim 128 --seqlen 8192" "compare 27 28 --dim 128 --seqlen 8448" "timeline 28 --dim 128 --seqlen 8192 --json $OUT/f3/t.json --out $OUT/f3/t.svg"; do
  start=$(date +%s)
  timeout -k 5 40 ./flashlab $cmd > $OUT/f3/out.txt 2>&1; rc=$?
  echo "== flashlab $cmd: exit $rc in $(( $(date +%s) - start )) s"; grep -vE "^wrote" $OUT/f3/out.txt | head -14 | cut -c1-160
done
rm -f $OUT/f3/t.json
cd $OUT && tar czf f3.tgz f3 && rm -rf f3
