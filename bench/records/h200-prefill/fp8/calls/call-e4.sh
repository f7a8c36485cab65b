#!/usr/bin/env bash
# Call E4: two uncommitted variants of stage 20, tested and benched beside it and stage 19:
# 22 = the softmax's max and sum as 4 partial chains a row (shorter dependency chains);
# 23 = the row sums on the tensor core (8 rows of E4M3 ones under each V^T slot, P V with
# N = 136, no FADD for the sums). And stage 21's preparation with its signs computed once a thread.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/e4
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e4/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/e4/gpu.txt
for t in stage22-var01-gpu stage23-var02-gpu stage21-incoherent-gpu; do
  start=$(date +%s)
  timeout -k 10 240 tests/$t --include-ignored --test-threads=1 > $OUT/e4/tests-$t.txt 2>&1
  echo "$t exit $? in $(( $(date +%s) - start )) s: $(grep 'test result' $OUT/e4/tests-$t.txt | cut -c1-80)"
  grep -E "panicked|FAIL|bound" $OUT/e4/tests-$t.txt | head -6 | cut -c1-300
done
for s in 8192 16384; do
  timeout -k 5 60 ./flashlab stage 21 --batch 1 --heads 16 --seqlen $s --dim 128 > $OUT/e4/run-21-$s.txt 2>&1
  echo "stage 21 $s: $(grep -E 'check|speed|prepare' $OUT/e4/run-21-$s.txt | cut -c1-110 | tr '\n' '|')"
done
timeout -k 10 400 ./flashlab bench --stages 19,20,22,23 --seqlens 4096,8192,16384 --dims 128 --causal both --out $OUT/e4/bench > $OUT/e4/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\||^####|failed|check-failed" $OUT/e4/bench.txt | cut -c1-160
timeout -k 5 60 ./flashlab timeline 23 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/e4/timeline-23.svg --json $OUT/e4/timeline-23.json > $OUT/e4/timeline-23.txt 2>&1
echo "timeline 23 exit $?: $(grep -E 'overhead|softmax|P·V|QK' $OUT/e4/timeline-23.txt | head -4 | cut -c1-100 | tr '\n' '|')"
tar czf $OUT/e4.tgz -C $OUT e4 && rm -rf $OUT/e4
