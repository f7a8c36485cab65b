#!/usr/bin/env bash
# Call M1: the merged tree (protocol-viz, the turns' constants in hopper/turns.cuh, which
# stages 13, 16, 18 and 19 now include): every GPU test binary, compute-sanitizer on the
# four stages whose kernels changed source, and stage 11's probes.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/m1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/m1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/m1/gpu.txt
start=$(date +%s)
timeout -k 10 300 ./run-tests.sh > $OUT/m1/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result" $OUT/m1/gpu-tests.txt | paste - - | sed -E 's/test result: //; s/; 0 measured.*//' | cut -c1-110
grep -E "FAILED|panicked" $OUT/m1/gpu-tests.txt | head
for n in 13 16 18 19; do
  timeout -k 10 120 ./sanitize.sh $n > $OUT/m1/sanitize$n.txt 2>&1
  echo "sanitize $n exit $?: $(tail -n 1 $OUT/m1/sanitize$n.txt)"
done
tar czf $OUT/m1.tgz -C $OUT m1 && rm -rf $OUT/m1
