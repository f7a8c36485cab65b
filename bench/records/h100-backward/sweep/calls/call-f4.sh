#!/usr/bin/env bash
# Call F4: FlashAttention-4's last part installed; every GPU test binary of the bundle (the
# backward stages' among them); the sanitizer on stages 22 and 23.
set -u
root="$(pwd)"
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?: $(tail -n 1 $OUT/fa4-install.txt)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/f4
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/f4/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/f4/gpu.txt
start=$(date +%s)
timeout -k 10 380 ./run-tests.sh > $OUT/f4/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result" $OUT/f4/gpu-tests.txt | paste - - | sed -E 's/test result: //; s/; 0 measured.*//' | cut -c1-110
grep -E "FAILED|panicked" $OUT/f4/gpu-tests.txt | head
for n in 22 23; do
  timeout -k 10 90 ./sanitize.sh $n > $OUT/f4/sanitize$n.txt 2>&1
  echo "sanitize $n exit $?: $(tail -n 1 $OUT/f4/sanitize$n.txt)"
done
cp $OUT/fa4-install.txt $OUT/f4/
tar czf $OUT/f4.tgz -C $OUT f4 && rm -rf $OUT/f4
