#!/usr/bin/env bash
# Call E1: stage 20 (FP8) on the GPU for the first time: its GPU tests, its sanitizer runs,
# and single runs beside stage 19 at d128 and d256 (seqlen 8192 and 16384, causal and not),
# with the preparation's time; one d128 timeline.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/e1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/e1/gpu.txt
start=$(date +%s)
timeout -k 10 240 tests/stage20-fp8-gpu --include-ignored --test-threads=1 > $OUT/e1/gpu-tests20.txt 2>&1
echo "stage 20 tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^test |test result" $OUT/e1/gpu-tests20.txt | cut -c1-150
grep -E "panicked|bound|FAIL" $OUT/e1/gpu-tests20.txt | head -30 | cut -c1-400
for spec in "20 128 8192" "19 128 8192" "20 128 8192 --causal" "19 128 8192 --causal" "20 256 8192" "19 256 8192" "20 128 16384" "19 128 16384" "20 256 16384" "19 256 16384"; do
  set -- $spec
  timeout -k 5 60 ./flashlab stage $1 --batch 1 --heads 16 --seqlen $3 --dim $2 ${4:-} > $OUT/e1/run-$1-d$2-$3${4:-}.txt 2>&1
  echo "stage $1 d$2 $3 ${4:-}: exit $? $(grep -E 'check|speed|prepare' $OUT/e1/run-$1-d$2-$3${4:-}.txt | cut -c1-160 | tr '\n' '|')"
done
start=$(date +%s)
timeout -k 10 150 ./sanitize.sh 20 > $OUT/e1/sanitize20.txt 2>&1
echo "sanitize 20 exit $? in $(( $(date +%s) - start )) s: $(tail -n 3 $OUT/e1/sanitize20.txt)"
timeout -k 5 60 ./flashlab timeline 20 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/e1/timeline-20.svg --json $OUT/e1/timeline-20.json > $OUT/e1/timeline-20.txt 2>&1
echo "timeline exit $?: $(grep -E 'overhead|softmax|P·V|QK' $OUT/e1/timeline-20.txt | head -4 | tr '\n' '|')"
tar czf $OUT/e1.tgz -C $OUT e1 && rm -rf $OUT/e1
