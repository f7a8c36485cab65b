#!/usr/bin/env bash
# Call C7 (a fresh machine, carrying dist/lb/: base/, the GPU bundle's flashlab of 96fda80,
# and var/, flashlab, stage 23's GPU test binary, the timeline test binary and sanitize.sh
# built from main with stage 23's kernel replaced by the variant, stepped descriptors):
# the variant's GPU tests, timeline tests and sanitizer; then the backward bench of stage 23
# from each build, alternating, two rounds.
set -u
root="$(pwd)"
mkdir -p $OUT/c7
(cd dist/lb/var && ./unpack.sh) && (cd dist/lb/base && ./unpack.sh) || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/c7/gpu.txt
cd dist/lb/var
for t in stage23-hopper-backward-gpu flashlab-timeline; do
  timeout -k 10 120 tests/$t --include-ignored --test-threads=1 > $OUT/c7/tests-$t.txt 2>&1
  echo "var $t exit $?: $(grep 'test result' $OUT/c7/tests-$t.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/c7/tests-$t.txt | head -4 | cut -c1-300
done
timeout -k 10 100 ./sanitize.sh 23 > $OUT/c7/sanitize23.txt 2>&1
echo "var sanitize 23 exit $?: $(tail -n 1 $OUT/c7/sanitize23.txt)"
cd $root
for round in 1 2; do
  order="base var"; [ $round = 2 ] && order="var base"
  for who in $order; do
    start=$(date +%s)
    timeout -k 10 100 dist/lb/$who/flashlab bench --backward --stages 23 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --heads 16 --out $OUT/c7/bench-$who-r$round > $OUT/c7/bench-$who-r$round.txt 2>&1
    echo "bench $who round $round exit $? in $(( $(date +%s) - start )) s: $(grep -E 'TFLOPS' $OUT/c7/bench-$who-r$round.txt | grep -v 'of light' | sed -E 's/^.*s([0-9]+) d([0-9]+)( causal)?: ([0-9.]+) TFLOPS.*/\2\3 \1 \4/' | tr '\n' ';')"
  done
done
cd $OUT && tar czf c7.tgz c7 && rm -rf c7
