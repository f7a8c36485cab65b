#!/usr/bin/env bash
# Call P1 (an H200, carrying dist/xp: flashlab with temporary stages 32 and 33, stage 28 with
# 1 of 16 and 1 of 8 exponentials as a cubic on the FMA pipe, and their GPU test binaries):
# both GPU test binaries; stages 28, 32 and 33 at d64 and d128, seqlen 4096-16384, causal
# and not, two rounds in opposite orders; the timeline of 33 at d128.
set -u
mkdir -p $OUT/p1
(cd dist/xp && ./unpack.sh) || exit 1
F=dist/xp/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/p1/gpu.txt
for s in 32-poly16 33-poly8; do
  timeout -k 10 150 dist/xp/tests/stage$s-gpu > $OUT/p1/tests-$s.txt 2>&1
  echo "tests $s exit $?"; grep -E "test result|FAILED|panicked" $OUT/p1/tests-$s.txt | head -5 | cut -c1-200
done
for r in 1 2; do
  order=$([ $r = 1 ] && echo 28,32,33 || echo 33,32,28)
  start=$(date +%s)
  timeout -k 10 200 $F bench --stages $order --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/p1/bench$r > $OUT/p1/bench$r.txt 2>&1
  echo "round $r ($order) exit $? in $(( $(date +%s) - start )) s"
  grep -E "^\| [0-9]|^####" $OUT/p1/bench$r.txt | cut -c1-160
done
timeout -k 5 60 $F timeline 33 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/p1/timeline-33.svg --json $OUT/p1/timeline-33.json > $OUT/p1/timeline-33.txt 2>&1
echo "timeline exit $?"; grep -E "consumer|producer" $OUT/p1/timeline-33.txt | cut -c1-100
cd $OUT && tar czf p1.tgz p1 && rm -rf p1
