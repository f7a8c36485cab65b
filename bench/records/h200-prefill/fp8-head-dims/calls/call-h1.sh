#!/usr/bin/env bash
# Call H1 (prepared, not run): FP8 at head dims 64 and 256 (stages 20, 21; stage 24 at 128
# with the consumer it shares). Their GPU tests at every head dim, the sanitizer (sanitize.sh
# takes 64 and 128), memcheck and racecheck at d256 on the sanitizer's small problem, and the
# timeline test binary. Run from the repository root with the GPU bundle built from the
# patched tree in dist/flashlab-gpu.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/h1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/h1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/h1/gpu.txt
for t in stage20-fp8-gpu stage21-incoherent-gpu stage24-v-transpose-gpu flashlab-timeline; do
  start=$(date +%s)
  timeout -k 10 200 tests/$t --include-ignored --test-threads=1 > $OUT/h1/tests-$t.txt 2>&1
  echo "$t exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/h1/tests-$t.txt | cut -c1-80)"
  grep -E "panicked|FAIL" $OUT/h1/tests-$t.txt | head -6 | cut -c1-300
done
for n in 20 21; do
  start=$(date +%s)
  timeout -k 10 120 ./sanitize.sh $n > $OUT/h1/sanitize$n.txt 2>&1
  echo "sanitize $n exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/h1/sanitize$n.txt)"
done
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout -k 10 120 $SAN --tool $tool --error-exitcode 3 ./flashlab stage 20 --dim 256 --causal --batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --no-time > $OUT/h1/$tool-d256.txt 2>&1
  echo "$tool d256 exit $?: $(tail -n 1 $OUT/h1/$tool-d256.txt)"
done
cd $root
tar czf $OUT/h1.tgz -C $OUT h1 && rm -rf $OUT/h1
