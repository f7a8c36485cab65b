#!/usr/bin/env bash
# Call R6: stage 11's timeline build held to two blocks an SM: the timeline test, stage
# 11's GPU tests, its timeline (d128, seqlen 8192, as in the run of record) twice, and
# stage 17's beside it.
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/r6
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/r6/gpu.txt
for t in flashlab-timeline stage11-wgmma-gpu; do
  timeout -k 10 120 tests/$t --include-ignored --test-threads=1 > $OUT/r6/$t.txt 2>&1
  echo "$t exit $?: $(grep -E 'test result' $OUT/r6/$t.txt | tail -1)"
done
./flashlab resources 11 | grep timeline > $OUT/r6/resources11.txt; cat $OUT/r6/resources11.txt
for run in 1 2; do
  timeout -k 5 60 ./flashlab timeline 11 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/r6/timeline-11-$run.svg --json $OUT/r6/timeline-11-$run.json > $OUT/r6/timeline-11-$run.txt 2>&1
  echo "timeline 11 ($run) exit $?: $(grep -E 'overhead' $OUT/r6/timeline-11-$run.txt | head -1)"
done
timeout -k 5 60 ./flashlab timeline 11 --batch 1 --heads 16 --seqlen 8192 --dim 64 --blocks 2 --out $OUT/r6/timeline-11-d64.svg --json $OUT/r6/timeline-11-d64.json > $OUT/r6/timeline-11-d64.txt 2>&1
echo "timeline 11 d64 exit $?: $(grep -E 'overhead' $OUT/r6/timeline-11-d64.txt | head -1)"
tar czf $OUT/r6.tgz -C $OUT r6 && rm -rf $OUT/r6
