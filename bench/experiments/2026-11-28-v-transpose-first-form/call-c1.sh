#!/usr/bin/env bash
# Call C1: stage 24 (V transposed in the kernel) first light: single runs, its GPU tests and
# stages 20's and 21's (the preparation changed), the sanitizer, a bench of 20 and 24.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/c1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/c1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/c1/gpu.txt
for c in "" "--causal"; do
  timeout -k 5 40 ./flashlab stage 24 --batch 1 --heads 16 --seqlen 8192 --dim 128 $c > $OUT/c1/run24$c.txt 2>&1
  echo "stage 24 $c exit $?: $(grep -E 'check|speed|prepare|rror' $OUT/c1/run24$c.txt | head -4 | cut -c1-100 | tr '\n' '|')"
done
for t in stage24-v-transpose-gpu stage20-fp8-gpu stage21-incoherent-gpu; do
  timeout -k 10 150 ./tests/$t > $OUT/c1/test-$t.txt 2>&1
  echo "$t exit $?: $(grep 'test result' $OUT/c1/test-$t.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/c1/test-$t.txt | head -4 | cut -c1-300
done
timeout -k 10 150 ./sanitize.sh 24 > $OUT/c1/sanitize24.txt 2>&1
echo "sanitize 24 exit $?: $(tail -n 1 $OUT/c1/sanitize24.txt)"
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout -k 10 100 $S --tool racecheck --error-exitcode 1 ./flashlab stage 24 --batch 1 --heads 2 --seqlen-q 300 --seqlen-k 1100 --dim 128 --no-time > $OUT/c1/racecheck-long.txt 2>&1
echo "racecheck 1100 keys exit $?: $(grep -E 'RACECHECK SUMMARY' $OUT/c1/racecheck-long.txt)"
timeout -k 10 200 ./flashlab bench --stages 20,24 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --heads 16 --out $OUT/c1/bench > $OUT/c1/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\| [0-9]|^####|failed" $OUT/c1/bench.txt | cut -c1-120
cd $root
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $OUT/c1
