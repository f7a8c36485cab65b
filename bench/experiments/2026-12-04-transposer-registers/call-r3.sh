#!/usr/bin/env bash
# Call R3 (an H200, carrying dist/xr, stage 31 with the producer at 24 registers, and dist/xs,
# the same tree with it at 32): the 32-register build's GPU tests and sanitize.sh 31; stages
# 28 and 31 from each build, d128, seqlen 4096-16384, causal and not, alternating, twice.
set -u
mkdir -p $OUT/r3
for b in xr xs; do (cd dist/$b && ./unpack.sh) || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/r3/gpu.txt
timeout -k 10 150 dist/xs/tests/stage31-natural-v-gpu > $OUT/r3/tests-31.txt 2>&1
echo "tests exit $?"; grep -E "test result|FAILED|panicked" $OUT/r3/tests-31.txt | head -5 | cut -c1-200
timeout -k 10 150 bash dist/xs/sanitize.sh 31 > $OUT/r3/sanitize31.txt 2>&1; echo "sanitize exit $?: $(tail -n 1 $OUT/r3/sanitize31.txt)"
for r in 1 2; do
  for b in xr xs; do
    st=$([ $b = xr ] && echo 28,31 || echo 31)
    start=$(date +%s)
    timeout -k 10 100 dist/$b/flashlab bench --stages $st --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --out $OUT/r3/bench-$b-$r > $OUT/r3/bench-$b-$r.txt 2>&1
    echo "round $r $b exit $? in $(( $(date +%s) - start )) s"
    grep -E "^\| [0-9]" $OUT/r3/bench-$b-$r.txt | cut -c1-160
  done
done
cd $OUT && tar czf r3.tgz r3 && rm -rf r3
