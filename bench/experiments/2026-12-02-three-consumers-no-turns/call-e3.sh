#!/usr/bin/env bash
# Call E3 (a fresh H200, carrying dist/x28, stage 28's record build, and dist/nt: the same
# tree built with FLASHLAB_NVCC_FLAGS=-DFLASHLAB_EXP_NO_TURNS, stage 28's consumers issuing
# S without taking turns, and its GPU test binary): the tests; stage 28 with and without
# its turns beside stage 27, at d64 and d128, in alternating order.
set -u
mkdir -p $OUT/e3
for v in x28 nt; do (cd dist/$v && ./unpack.sh) || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e3/gpu.txt
timeout -k 10 90 dist/nt/tests/stage28-gpu --include-ignored --test-threads=1 > $OUT/e3/tests-nt.txt 2>&1
echo "nt tests exit $?: $(grep 'test result' $OUT/e3/tests-nt.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/e3/tests-nt.txt | head -4 | cut -c1-240
show() { grep -E "TFLOPS" $1 | grep -v "of light" | sed -E 's/^\[[a-z]+ [0-9]+\/[0-9]+\] //' | cut -c1-100; }
run() { start=$(date +%s); timeout -k 10 80 dist/$1/flashlab bench --stages $2 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/e3/$1-$3 > $OUT/e3/$1-$3.txt 2>&1
  echo "$1 stages $2 exit $? in $(( $(date +%s) - start )) s"; show $OUT/e3/$1-$3.txt; }
run x28 27,28 r1
run nt 28 r2
run nt 28 r3
run x28 28,27 r4
cd $OUT && tar czf e3.tgz e3 && rm -rf e3
