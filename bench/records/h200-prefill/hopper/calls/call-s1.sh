#!/usr/bin/env bash
# Call S1: every GPU test binary of the bundle (stage 19 included); stage 19's sanitizer
# runs; stage 19's measured timelines (d64 and d128, seqlen 8192; d64 causal), and stage
# 18's at d64 beside them, on the same machine.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/s1/timelines
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/s1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/s1/gpu.txt
./flashlab list > $OUT/s1/list.txt 2>&1
start=$(date +%s)
timeout -k 10 300 ./run-tests.sh > $OUT/s1/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result" $OUT/s1/gpu-tests.txt | paste - - | sed -E 's/test result: //; s/; 0 measured.*//' | cut -c1-120
grep -E "FAILED|panicked" $OUT/s1/gpu-tests.txt | head
start=$(date +%s)
timeout -k 10 120 ./sanitize.sh 19 > $OUT/s1/sanitize19.txt 2>&1
echo "sanitize 19 exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/s1/sanitize19.txt)"
for spec in "19 64" "18 64" "19 64 --causal" "19 128"; do
  set -- $spec; s=$1; d=$2; c=${3:-}
  name=timeline-$s${c:+-causal}; [ "$d" = 64 ] && name=$name-d64
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim $d $c --blocks 2 --out $OUT/s1/timelines/$name.svg --json $OUT/s1/timelines/$name.json > $OUT/s1/timelines/$name.txt 2>&1
  echo "$name exit $?: $(grep -E 'overhead' $OUT/s1/timelines/$name.txt | head -1)"
  grep -E "softmax|P·V|QK" $OUT/s1/timelines/$name.txt | head -3
done
tar czf $OUT/s1.tgz -C $OUT s1 && rm -rf $OUT/s1
