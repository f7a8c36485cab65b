#!/usr/bin/env bash
# Call 1 (next GPU session, on the GPU bundle of main with stage26-lean-loop.patch.txt
# applied, built with the pinned CUDA 13.0): stage 26's GPU tests, sanitizer and timeline
# test; then stages 19 and 26 in two bench rounds of opposite order (d 64/128/256, causal
# both, seqlen 4096-16384, batch 1, 16 heads); `flashlab schedule 26` beside them. The
# bundle's flashlab is kept in /tmp for call 2 (the machine keeps /tmp while warm).
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/c1 /tmp/lean && cp flashlab /tmp/lean/flashlab-130
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/c1/gpu.txt
timeout -k 10 300 tests/stage26-lean-loop-gpu --include-ignored --test-threads=1 > $OUT/c1/stage26-gpu.txt 2>&1
echo "stage 26 GPU tests exit $?: $(grep 'test result' $OUT/c1/stage26-gpu.txt | tail -1)"
timeout -k 10 240 tests/flashlab-timeline --include-ignored --test-threads=1 > $OUT/c1/timeline.txt 2>&1
echo "timeline tests exit $?: $(grep 'test result' $OUT/c1/timeline.txt | tail -1)"
timeout -k 10 300 ./sanitize.sh 26 > $OUT/c1/sanitize-26.txt 2>&1
echo "sanitize.sh 26 exit $?: $(grep -c 'ERROR SUMMARY: 0 errors' $OUT/c1/sanitize-26.txt) clean tools"
for order in 19,26 26,19; do
  start=$(date +%s)
  timeout -k 10 200 ./flashlab bench --stages $order --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/c1/bench-${order//,/-} > $OUT/c1/bench-${order//,/-}.txt 2>&1
  echo "bench $order exit $? in $(( $(date +%s) - start )) s"
done
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $OUT/c1
