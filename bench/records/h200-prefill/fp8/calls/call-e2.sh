#!/usr/bin/env bash
# Call E2: stage 20 with P V folded into O each tile: its GPU tests (with the 8192-key
# sequence), its sanitizer runs, single runs beside stage 19 at d128 (seqlen 4096, 8192,
# 16384, causal and not) with the preparation's time, a timeline, and Nsight Compute's
# summary of stage 20 and 19 at d128 seqlen 8192.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/e2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e2/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/e2/gpu.txt
start=$(date +%s)
timeout -k 10 240 tests/stage20-fp8-gpu --include-ignored --test-threads=1 > $OUT/e2/gpu-tests20.txt 2>&1
echo "stage 20 tests exit $? in $(( $(date +%s) - start )) s"
grep -E "^test |test result" $OUT/e2/gpu-tests20.txt | cut -c1-150
grep -E "panicked|bound|FAIL" $OUT/e2/gpu-tests20.txt | head -30 | cut -c1-400
for s in 4096 8192 16384; do for c in "" --causal; do for n in 20 19; do
  f=$OUT/e2/run-$n-d128-$s$c.txt
  timeout -k 5 60 ./flashlab stage $n --batch 1 --heads 16 --seqlen $s --dim 128 $c > $f 2>&1
  echo "stage $n $s $c: exit $? $(grep -E 'check|speed|prepare' $f | sed -E 's/\(bound/(b/; s/ for the same math in the dtype//' | cut -c1-120 | tr '\n' '|')"
done; done; done
start=$(date +%s)
timeout -k 10 150 ./sanitize.sh 20 > $OUT/e2/sanitize20.txt 2>&1
echo "sanitize 20 exit $? in $(( $(date +%s) - start )) s: $(tail -n 2 $OUT/e2/sanitize20.txt | tr '\n' '|')"
timeout -k 5 60 ./flashlab timeline 20 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/e2/timeline-20.svg --json $OUT/e2/timeline-20.json > $OUT/e2/timeline-20.txt 2>&1
echo "timeline exit $?: $(grep -E 'check|overhead|softmax|P·V|QK' $OUT/e2/timeline-20.txt | head -5 | cut -c1-100 | tr '\n' '|')"
for n in 20 19; do
  NCU_OUT=$OUT/e2 timeout -k 10 150 ./ncu.sh $n --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/e2/ncu-$n.txt 2>&1
  echo "ncu $n exit $?"; grep -vE "^\s*$" $OUT/e2/ncu-$n.txt | tail -25 | cut -c1-150
done
tar czf $OUT/e2.tgz -C $OUT e2 && rm -rf $OUT/e2
