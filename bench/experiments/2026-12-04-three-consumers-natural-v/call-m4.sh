#!/usr/bin/env bash
# Call M4 (an H200, carrying dist/xd: flashlab with a temporary stage 31, stage 28 with V as
# it comes and stage 30's transposing warps, and its GPU test binary): its GPU tests,
# racecheck and memcheck on 1100 keys and sanitize.sh 31; stages 28, 30 and 31 at d128,
# seqlen 4096-16384, causal and not, two rounds in opposite orders.
set -u
mkdir -p $OUT/m4
(cd dist/xd && ./unpack.sh) || exit 1
F=dist/xd/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/m4/gpu.txt
timeout -k 10 150 dist/xd/tests/stage31-gpu > $OUT/m4/tests-31.txt 2>&1
echo "tests exit $?"; grep -E "test result|FAILED|panicked" $OUT/m4/tests-31.txt | head -5 | cut -c1-200
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  timeout -k 10 90 $S --tool $tool --error-exitcode 1 $F stage 31 --batch 1 --heads 2 --seqlen-q 300 --seqlen-k 1100 --dim 128 --no-time > $OUT/m4/$tool-31-long.txt 2>&1
  echo "$tool 31 long exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/m4/$tool-31-long.txt
done
timeout -k 10 120 bash dist/xd/sanitize.sh 31 > $OUT/m4/sanitize31.txt 2>&1; echo "sanitize exit $?: $(tail -n 1 $OUT/m4/sanitize31.txt)"
for r in 1 2; do
  order=$([ $r = 1 ] && echo 28,30,31 || echo 31,30,28)
  start=$(date +%s)
  timeout -k 10 120 $F bench --stages $order --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --out $OUT/m4/bench$r > $OUT/m4/bench$r.txt 2>&1
  echo "round $r ($order) exit $? in $(( $(date +%s) - start )) s"
  grep -E "^\| [0-9]" $OUT/m4/bench$r.txt | cut -c1-160
done
cd $OUT && tar czf m4.tgz m4 && rm -rf m4
