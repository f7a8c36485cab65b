#!/usr/bin/env bash
# Call F1: the 8-bit wgmma probe (stage 11's wgmma_fp8_probe against layout-viz's
# wgmma_a_fp8 and wgmma_c), the 16-bit probe and stage 11's GPU tests beside it.
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/f1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/f1/gpu.txt
for t in stage11-wgmma-wgmma_fp8_probe stage11-wgmma-wgmma_probe stage11-wgmma-gpu; do
  timeout -k 10 120 tests/$t --include-ignored --test-threads=1 > $OUT/f1/$t.txt 2>&1
  echo "$t exit $?: $(grep -E 'test result' $OUT/f1/$t.txt | tail -1)"
  grep -E "FAILED|panicked|assert" $OUT/f1/$t.txt | head -6
done
./flashlab resources 11 > $OUT/f1/resources11.txt 2>&1; grep -i "probe" $OUT/f1/resources11.txt
timeout -k 10 120 ./sanitize.sh 11 > $OUT/f1/sanitize11.txt 2>&1; echo "sanitize 11 exit $?: $(tail -n 1 $OUT/f1/sanitize11.txt)"
tar czf $OUT/f1.tgz -C $OUT f1 && rm -rf $OUT/f1
