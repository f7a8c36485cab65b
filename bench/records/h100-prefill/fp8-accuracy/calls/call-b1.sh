#!/usr/bin/env bash
# Call B1: FP8 scales per tensor. The GPU tests of stages 20 and 21 (with the new
# scales_per_tensor trials), single runs with each scale, the accuracy table at 1024 and
# 4096 keys (stages 19, 20, 21; each FP8 stage with both scales), compute-sanitizer on the
# per-tensor preparation.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/b1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/b1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/b1/gpu.txt
for t in stage20-fp8-gpu stage21-incoherent-gpu; do
  timeout -k 10 150 ./tests/$t > $OUT/b1/test-$t.txt 2>&1
  echo "$t exit $?: $(grep 'test result' $OUT/b1/test-$t.txt | cut -c1-80)"
  grep -E "panicked|FAILED|scales_per" $OUT/b1/test-$t.txt | head -6 | cut -c1-300
done
for n in 20 21; do for sc in head tensor; do
  timeout -k 5 40 ./flashlab stage $n --batch 1 --heads 16 --seqlen 8192 --dim 128 --fp8-scales $sc > $OUT/b1/run-$n-$sc.txt 2>&1
  echo "stage $n $sc exit $?: $(grep -E 'check|speed|prepare' $OUT/b1/run-$n-$sc.txt | cut -c1-90 | tr '\n' '|')"
done; done
for s in 1024 4096; do
  timeout -k 10 200 ./flashlab accuracy --seqlen $s --stages 19,20,21 --json $OUT/b1/accuracy-$s.json > $OUT/b1/accuracy-$s.txt 2>&1
  echo "accuracy $s exit $?"; grep -E "stage|per tensor|per head" $OUT/b1/accuracy-$s.txt | cut -c1-150
done
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  timeout -k 10 90 $S --tool $tool --error-exitcode 1 ./flashlab stage 21 --batch 2 --heads 4 --kv-heads 2 --seqlen-q 200 --seqlen-k 131 --dim 128 --causal --no-time --fp8-scales tensor > $OUT/b1/san-$tool.txt 2>&1
  echo "sanitize 21 per tensor $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|check ' $OUT/b1/san-$tool.txt | tr '\n' '|' | cut -c1-160)"
done
cd $root
tar czf $OUT/b1.tgz -C $OUT b1 && rm -rf $OUT/b1
