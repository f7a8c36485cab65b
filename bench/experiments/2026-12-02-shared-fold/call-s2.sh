#!/usr/bin/env bash
# Call S2 (a fresh H200, carrying dist/xa and dist/xb: flashlab and stage 29's GPU tests of the
# second form, P through shared memory, folding every 2 tiles at d128 and every tile at d64
# (xa), every 4 and every 2 (xb)): both forms' tests; the sanitizer on xa; stage 28 beside
# both forms, in two orders; xa's timeline at d128.
set -u
mkdir -p $OUT/s2
for v in xa xb; do (cd dist/$v && ./unpack.sh) || exit 1; done
A=dist/xa/flashlab; B=dist/xb/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/s2/gpu.txt
for v in xa xb; do
  timeout -k 10 150 dist/$v/tests/stage29-shared-fold-gpu --include-ignored --test-threads=1 > $OUT/s2/tests-$v.txt 2>&1
  echo "$v tests exit $?: $(grep 'test result' $OUT/s2/tests-$v.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/s2/tests-$v.txt | head -6 | cut -c1-300
done
start=$(date +%s)
timeout -k 10 120 dist/xa/sanitize.sh 29 > $OUT/s2/sanitize-xa.txt 2>&1
echo "sanitize xa exit $? in $(( $(date +%s) - start )) s: $(tail -1 $OUT/s2/sanitize-xa.txt | cut -c1-100)"
show() { grep -E "TFLOPS" $1 | grep -v "of light" | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | cut -c1-100; }
run() { local name=$1; shift; start=$(date +%s); timeout -k 10 100 "$@" --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/s2/$name > $OUT/s2/$name.txt 2>&1; echo "$name exit $? in $(( $(date +%s) - start )) s"; show $OUT/s2/$name.txt; }
run a-28-29 $A bench --stages 28,29
run b-29 $B bench --stages 29
run a-29-28 $A bench --stages 29,28
run b-29-again $B bench --stages 29
timeout -k 5 40 $A timeline 29 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/s2/timeline-29a-d128.svg > $OUT/s2/timeline-29a-d128.txt 2>&1
echo "timeline xa d128 exit $?"; sed -n 4,30p $OUT/s2/timeline-29a-d128.txt | cut -c1-140
timeout -k 5 40 $A timeline 28 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/s2/timeline-28-d128.svg > $OUT/s2/timeline-28-d128.txt 2>&1
echo "timeline 28 d128 exit $?"; sed -n 4,20p $OUT/s2/timeline-28-d128.txt | cut -c1-140
cd $OUT && tar czf s2.tgz s2 && rm -rf s2
