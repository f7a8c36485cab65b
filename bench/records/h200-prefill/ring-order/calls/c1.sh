#!/usr/bin/env bash
# Call C1 (a fresh H200, carrying dist/xa: flashlab and stage 29's GPU test binary, built
# from this commit; and FlashAttention-4's first wheel part, stashed): stage 29's GPU tests;
# compute-sanitizer on it (sanitize.sh, then memcheck and racecheck at d256 on the
# sanitizer's small problem); measured timelines of stages 26 and 29 at seqlen 8192.
set -u
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
cd dist/xa && ./unpack.sh
mkdir -p $OUT/c1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/c1/gpu.txt
start=$(date +%s)
timeout -k 10 240 tests/stage29-ring-order-gpu --include-ignored --test-threads=1 > $OUT/c1/tests-29.txt 2>&1
echo "tests exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/c1/tests-29.txt | cut -c1-80)"
grep -E "panicked|FAIL" $OUT/c1/tests-29.txt | head -6 | cut -c1-300
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
start=$(date +%s)
timeout -k 10 150 ./sanitize.sh 29 > $OUT/c1/sanitize29.txt 2>&1
echo "sanitize 29 exit $? in $(( $(date +%s) - start )) s: $(tail -n 1 $OUT/c1/sanitize29.txt)"
for tool in memcheck racecheck; do
  timeout -k 10 90 $SAN --tool $tool --error-exitcode 3 ./flashlab stage 29 --dim 256 --causal --batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --no-time > $OUT/c1/$tool-29-d256.txt 2>&1
  echo "$tool 29 d256 exit $?: $(tail -n 1 $OUT/c1/$tool-29-d256.txt)"
done
for spec in "26 128" "29 128" "29 64" "29 128 --causal"; do
  set -- $spec; s=$1; d=$2; c=${3:-}
  name=timeline-$s${c:+-causal}-d$d
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim $d $c --blocks 2 --out $OUT/c1/$name.svg --json $OUT/c1/$name.json > $OUT/c1/$name.txt 2>&1
  echo "$name exit $?: $(grep -E 'overhead' $OUT/c1/$name.txt | head -1)"
  grep -E "wait full|softmax|QK" $OUT/c1/$name.txt | head -3
done
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $OUT/c1
