#!/usr/bin/env bash
# Call R7: decode after DecodeParams gained cache_capacity: stages 14 and 15's GPU tests,
# compute-sanitizer of both, a contiguous and a paged run of each, and a decode bench
# beside the committed record's shapes (no baselines).
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/r7
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/r7/gpu.txt
for t in stage14-flash-decode-gpu stage15-fused-combine-gpu; do
  timeout -k 10 200 tests/$t --include-ignored --test-threads=1 > $OUT/r7/$t.txt 2>&1
  echo "$t exit $?: $(grep -E 'test result' $OUT/r7/$t.txt | tail -1)"; grep -E "FAILED|panicked" $OUT/r7/$t.txt | head -3
done
for n in 14 15; do
  timeout -k 10 150 ./sanitize.sh $n > $OUT/r7/sanitize$n.txt 2>&1
  echo "sanitize $n exit $?: $(tail -n 1 $OUT/r7/sanitize$n.txt)"
  timeout -k 10 60 ./flashlab stage $n --batch 4 --heads 32 --kv-heads 8 --cache-lens 8192,77,4099,1 --dim 128 > $OUT/r7/stage$n-contiguous.txt 2>&1
  echo "stage $n contiguous exit $?: $(grep -E '^check' $OUT/r7/stage$n-contiguous.txt | cut -c1-80)"
  timeout -k 10 60 ./flashlab stage $n --batch 4 --heads 32 --kv-heads 8 --cache-lens 8192,77,4099,1 --dim 128 --page-size 16 > $OUT/r7/stage$n-paged.txt 2>&1
  echo "stage $n paged exit $?: $(grep -E '^check' $OUT/r7/stage$n-paged.txt | cut -c1-80)"
done
tar czf $OUT/r7.tgz -C $OUT r7 && rm -rf $OUT/r7
