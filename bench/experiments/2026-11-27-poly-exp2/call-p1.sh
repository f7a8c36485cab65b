#!/usr/bin/env bash
# Call P1: stage 19 (part of the exponentials as a cubic on the FMA pipe, 2 of 8) and four
# variants built beside it (20: 1 of 8, 21: 3 of 8, 22: 4 of 8, 23: 2 of 8 with the lazy
# rescale at d64 too): GPU tests of 19, 22 and 23, SASS counts, then a bench round of
# 18..23 at d64, d128, d256 (no baselines: the ratios to stage 18 decide).
set -u
cd dist/flashlab-gpu && ./unpack.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p $OUT/p1
for t in stage19-poly-exp2-gpu stage22-var22-gpu stage23-var23-gpu; do
  start=$(date +%s)
  timeout -k 10 150 tests/$t --include-ignored --test-threads=1 > $OUT/p1/$t.txt 2>&1
  echo "$t exit $? in $(( $(date +%s) - start )) s: $(grep -E 'test result' $OUT/p1/$t.txt | tail -1)"
  grep -E "FAILED|panicked" $OUT/p1/$t.txt | head -6
done
for n in 18 19 22; do ./flashlab resources $n > $OUT/p1/resources$n.txt 2>&1; done
grep -E "d128|MUFU|HGMMA" $OUT/p1/resources19.txt | head -8
start=$(date +%s)
timeout -k 10 330 ./flashlab bench --stages 18,19,20,21,22,23 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/p1/bench-a > $OUT/p1/bench-a.txt 2>&1
echo "bench a exit $? in $(( $(date +%s) - start )) s"
grep -E "TFLOPS" $OUT/p1/bench-a.txt | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //' | grep -v "of light" | head -120
tar czf $OUT/p1.tgz -C $OUT p1 && rm -rf $OUT/p1
