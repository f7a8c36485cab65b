#!/usr/bin/env bash
# Call G4: FlashAttention-4's last part installed; the GPU tests of stages 22 and 23 and of
# flashlab timeline (every timeline stage); the sanitizer on stage 23.
set -u
root="$(pwd)"
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?: $(tail -n 1 $OUT/fa4-install.txt)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/g4
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/g4/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/g4/gpu.txt
for t in stage22-backward-gpu stage23-hopper-backward-gpu flashlab-timeline; do
  timeout -k 10 150 ./tests/$t > $OUT/g4/test-$t.txt 2>&1
  echo "$t exit $?: $(grep 'test result' $OUT/g4/test-$t.txt | cut -c1-80)"
  grep -E "panicked|FAILED" $OUT/g4/test-$t.txt | head -4 | cut -c1-300
done
timeout -k 10 120 ./sanitize.sh 23 > $OUT/g4/sanitize23.txt 2>&1
echo "sanitize 23 exit $?: $(tail -n 1 $OUT/g4/sanitize23.txt)"
grep -E "Error: Race|Hazard" $OUT/g4/sanitize23.txt | head -3 | cut -c1-200
cp $OUT/fa4-install.txt $OUT/g4/
tar czf $OUT/g4.tgz -C $OUT g4 && rm -rf $OUT/g4
