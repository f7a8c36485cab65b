#!/usr/bin/env bash
# call-t.sh PART (a, b or c): calls T1-T3 on one H200, each carrying dist/gpu-PART, one
# third of the GPU bundle of `just gpu-bundle` (the bundle is 31 MiB and the working tree 44,
# so it travels in three parts): every test binary of that part, with run-tests.sh.
set -u
part=$1
mkdir -p $OUT/t$part
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/t$part/gpu.txt
start=$(date +%s)
timeout -k 10 420 bash dist/gpu-$part/run-tests.sh > $OUT/t$part/tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result:|FAILED|panicked|test binaries failed" $OUT/t$part/tests.txt | sed 's/finished in.*//' | paste - - | cut -c1-150
cd $OUT && tar czf t$part.tgz t$part && rm -rf t$part
