#!/usr/bin/env bash
# Session 10, call R6 (after R5, same machine): every GPU test of the bundle
# of the record's build (run-tests.sh: every test binary, --include-ignored); sanitize.sh 23.
set -u
root="$(pwd)"
: > $OUT/fa4-install.txt  # FlashAttention-4 was installed by call R4
cd dist/flashlab-gpu && ./unpack.sh > /dev/null
mkdir -p $OUT/r4
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/r4/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/r4/gpu.txt
start=$(date +%s)
timeout -k 10 420 ./run-tests.sh > $OUT/r4/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/r4/gpu-tests.txt)"
grep -E "^test result" $OUT/r4/gpu-tests.txt | awk '{p+=$4; f+=$6; i+=$8} END {print "passed", p, "failed", f, "ignored", i}'
grep -E "panicked|FAILED" $OUT/r4/gpu-tests.txt | head -6 | cut -c1-300
timeout -k 10 120 ./sanitize.sh 23 > $OUT/r4/sanitize23.txt 2>&1
echo "sanitize 23 exit $?: $(tail -n 1 $OUT/r4/sanitize23.txt)"
cp $OUT/fa4-install.txt $OUT/r4/
cd $root
tar czf $OUT/r4.tgz -C $OUT r4 && rm -rf $OUT/r4
