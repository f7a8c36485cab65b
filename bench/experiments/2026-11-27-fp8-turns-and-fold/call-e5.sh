#!/usr/bin/env bash
# Call E5: two uncommitted variants of stage 20, tested and benched beside it:
# 22 = no ping-pong turns (each consumer issues as soon as it is ready);
# 23 = the fold of a tile's P V moved from after its wait to under the next tile's QK issue.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/e5
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e5/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/e5/gpu.txt
for t in stage22-var01-gpu stage23-var02-gpu; do
  timeout -k 10 200 tests/$t --include-ignored --test-threads=1 > $OUT/e5/tests-$t.txt 2>&1
  echo "$t exit $?: $(grep 'test result' $OUT/e5/tests-$t.txt | cut -c1-80)"
  grep -E "panicked|FAIL" $OUT/e5/tests-$t.txt | head -4 | cut -c1-250
done
timeout -k 10 300 ./flashlab bench --stages 20,22,23 --seqlens 4096,8192,16384 --dims 128 --causal both --out $OUT/e5/bench > $OUT/e5/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\||^####|failed" $OUT/e5/bench.txt | cut -c1-150
timeout -k 10 300 ./flashlab bench --stages 23,22,20 --seqlens 4096,8192,16384 --dims 128 --causal both --out $OUT/e5/bench2 > $OUT/e5/bench2.txt 2>&1
echo "bench2 exit $?"; grep -E "^\||^####|failed" $OUT/e5/bench2.txt | cut -c1-150
tar czf $OUT/e5.tgz -C $OUT e5 && rm -rf $OUT/e5
