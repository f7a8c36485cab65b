#!/usr/bin/env bash
# Call C1 (a fresh machine, carrying the GPU bundle dist/flashlab-gpu): the GPU tests of
# stages 26 and 27 and the timeline tests; compute-sanitizer on both (sanitize.sh, then
# memcheck and racecheck at d256 on the sanitizer's small problem); then each against the
# stage it builds on, 19 → 26 and 20 → 27, in two bench rounds of opposite order.
set -u
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/c1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/c1/gpu.txt
./flashlab list > $OUT/c1/list.txt 2>&1
for t in stage26-lean-loop-gpu stage27-lean-fp8-gpu flashlab-timeline; do
  start=$(date +%s)
  timeout -k 10 240 tests/$t --include-ignored --test-threads=1 > $OUT/c1/tests-$t.txt 2>&1
  echo "$t exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/c1/tests-$t.txt | cut -c1-80)"
  grep -E "panicked|FAIL" $OUT/c1/tests-$t.txt | head -6 | cut -c1-300
done
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for n in 26 27; do
  start=$(date +%s)
  timeout -k 10 150 ./sanitize.sh $n > $OUT/c1/sanitize$n.txt 2>&1
  echo "sanitize $n exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/c1/sanitize$n.txt)"
  for tool in memcheck racecheck; do
    timeout -k 10 90 $SAN --tool $tool --error-exitcode 3 ./flashlab stage $n --dim 256 --causal --batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --no-time > $OUT/c1/$tool$n-d256.txt 2>&1
    echo "$tool $n d256 exit $?: $(tail -n 1 $OUT/c1/$tool$n-d256.txt)"
  done
done
for order in 19,26 26,19 20,27 27,20; do
  start=$(date +%s)
  timeout -k 10 150 ./flashlab bench --stages $order --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/c1/bench-${order//,/-} > $OUT/c1/bench-${order//,/-}.txt 2>&1
  echo "bench $order exit $? in $(( $(date +%s) - start )) s"
  grep -E "TFLOPS" $OUT/c1/bench-${order//,/-}.txt | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-150
done
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $OUT/c1
