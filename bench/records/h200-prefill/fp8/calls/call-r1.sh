#!/usr/bin/env bash
# Call R1, the FP8 run of record: every GPU test binary of the bundle; the sanitizer on
# stages 20 and 21; single runs of 20 and 21 with their preparation's time; flashlab
# accuracy with stages 19, 20 and 21 at seqlen 1024 and 4096; the bench of stages 19, 20
# and 21 at d128 with the baselines (cuDNN's FP8 attention through the cuDNN frontend's
# wheel among them); stage 20's timeline at seqlen 8192.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/r1/timelines
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/r1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/r1/gpu.txt
./flashlab list > $OUT/r1/list.txt 2>&1
start=$(date +%s)
timeout -k 10 330 ./run-tests.sh > $OUT/r1/gpu-tests.txt 2>&1
echo "run-tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^== |test result" $OUT/r1/gpu-tests.txt | paste - - | sed -E 's/test result: //; s/; 0 measured.*//' | cut -c1-110
grep -E "FAILED|panicked" $OUT/r1/gpu-tests.txt | head
for n in 20 21; do
  timeout -k 10 150 ./sanitize.sh $n > $OUT/r1/sanitize$n.txt 2>&1
  echo "sanitize $n exit $?: $(tail -n 1 $OUT/r1/sanitize$n.txt)"
done
for n in 20 21; do for s in 8192 16384; do
  f=$OUT/r1/run-$n-$s.txt
  timeout -k 5 60 ./flashlab stage $n --batch 1 --heads 16 --seqlen $s --dim 128 > $f 2>&1
  echo "stage $n $s: $(grep -E 'check|speed|prepare' $f | cut -c1-120 | tr '\n' '|')"
done; done
for s in 1024 4096; do
  timeout -k 10 200 ./flashlab accuracy --seqlen $s --stages 19,20,21 --json $OUT/r1/accuracy-$s.json > $OUT/r1/accuracy-$s.txt 2>&1
  echo "accuracy $s exit $?"; grep -E "stage" $OUT/r1/accuracy-$s.txt | cut -c1-140
done
bash $root/dist/cudnn-frontend/install-cudnn-frontend.sh > $OUT/r1/cudnn-fe-install.txt 2>&1; echo "cudnn frontend install exit $?"
. /tmp/cudnn-fe/env.sh
timeout -k 10 420 ./flashlab bench --stages 19,20,21 --seqlens 4096,8192,16384 --dims 128 --causal both --baselines --plots --out $OUT/r1/bench > $OUT/r1/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\||^####|failed" $OUT/r1/bench.txt | cut -c1-170
timeout -k 5 60 ./flashlab timeline 20 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/r1/timelines/timeline-20.svg --json $OUT/r1/timelines/timeline-20.json > $OUT/r1/timelines/timeline-20.txt 2>&1
echo "timeline 20 exit $?: $(grep -E 'check|overhead|softmax|P·V|QK' $OUT/r1/timelines/timeline-20.txt | head -5 | cut -c1-100 | tr '\n' '|')"
tar czf $OUT/r1.tgz -C $OUT r1 && rm -rf $OUT/r1
