#!/usr/bin/env bash
# Call V2: the session's last tree (fp8_pv_column moved into fragments.cuh): every GPU test
# binary, the sanitizer on stages 20 and 21, and stage 19's timeline.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/v2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/v2/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/v2/gpu.txt
start=$(date +%s)
timeout -k 10 330 ./run-tests.sh > $OUT/v2/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result" $OUT/v2/gpu-tests.txt | paste - - | sed -E 's/test result: //; s/; 0 measured.*//' | cut -c1-100
grep -E "FAILED|panicked" $OUT/v2/gpu-tests.txt | head
for n in 20 21; do
  timeout -k 10 150 ./sanitize.sh $n > $OUT/v2/sanitize$n.txt 2>&1
  echo "sanitize $n exit $?: $(tail -n 1 $OUT/v2/sanitize$n.txt)"
done
timeout -k 5 60 ./flashlab timeline 19 --batch 1 --heads 16 --seqlen 4096 --dim 128 --blocks 1 --out $OUT/v2/t19.svg > $OUT/v2/t19.txt 2>&1
echo "timeline 19 exit $?: $(grep check $OUT/v2/t19.txt | cut -c1-60)"
tar czf $OUT/v2.tgz -C $OUT v2 && rm -rf $OUT/v2
