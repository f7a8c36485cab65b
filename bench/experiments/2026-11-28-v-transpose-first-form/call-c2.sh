#!/usr/bin/env bash
# Call C2: call C1's bench was on a GPU running at a fraction of its speed (stage 20 at
# 171-597 TFLOPS, its GEMM 758); again on a fresh machine, with the clocks and throttle
# reasons logged, twice, and stage 24's timeline.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/c2/timelines
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv | tee $OUT/c2/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/c2/gpu.txt
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >> $OUT/c2/gpu.txt
for r in 1 2; do
  timeout -k 10 150 ./flashlab bench --stages 20,24 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --heads 16 --out $OUT/c2/bench$r > $OUT/c2/bench$r.txt 2>&1
  echo "bench $r exit $?: $(grep 'speed of light' $OUT/c2/bench$r.txt)"; grep -E "^\| [0-9]|^####" $OUT/c2/bench$r.txt | cut -c1-120
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv | tee -a $OUT/c2/gpu.txt
timeout -k 5 60 ./flashlab stage 24 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/c2/run24.txt 2>&1
echo "stage 24: $(grep -E 'speed|prepare' $OUT/c2/run24.txt | cut -c1-90 | tr '\n' '|')"
timeout -k 5 60 ./flashlab timeline 24 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/c2/timelines/timeline-24.svg --json $OUT/c2/timelines/timeline-24.json > $OUT/c2/timelines/timeline-24.txt 2>&1
echo "timeline 24 exit $?: $(grep -E 'check|overhead' $OUT/c2/timelines/timeline-24.txt | head -2 | cut -c1-100 | tr '\n' '|')"
cd $root
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $OUT/c2
