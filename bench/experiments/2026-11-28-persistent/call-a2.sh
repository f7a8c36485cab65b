#!/usr/bin/env bash
# Call A2: compute-sanitizer on stage 24: its walk test grid (3 blocks, several work tiles
# each) at d64, d128 (O's own tile) and d256 (O through Q's tile), then sanitize.sh 24.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/a2
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for f in bf16_d64_causal bf16_d128_causal bf16_d256_causal; do for tool in memcheck racecheck synccheck; do
  timeout -k 10 90 $S --tool $tool --error-exitcode 1 ./tests/stage24-persistent-walk $f > $OUT/a2/san-$f-$tool.txt 2>&1
  echo "walk $f $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $OUT/a2/san-$f-$tool.txt | tr '\n' '|' | cut -c1-160)"
done; done
timeout -k 10 120 ./sanitize.sh 24 > $OUT/a2/sanitize24.txt 2>&1
echo "sanitize 24 exit $?: $(tail -n 1 $OUT/a2/sanitize24.txt)"
cd $root
tar czf $OUT/a2.tgz -C $OUT a2 && rm -rf $OUT/a2
