#!/usr/bin/env bash
# Call A1 (a fresh H200, carrying dist/fa4-part1 and dist/xa: flashlab and stage 30's GPU
# test binary, built at the commit this record names): FlashAttention-4's first part stashed;
# stage 30's GPU tests, `just sanitize 30` (sanitize.sh) and its memcheck and racecheck at d256.
set -u
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
mkdir -p $OUT/a1
(cd dist/xa && ./unpack.sh) || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/a1/gpu.txt
start=$(date +%s)
timeout -k 10 240 dist/xa/tests/stage30-loop-invariants-gpu > $OUT/a1/tests-30.txt 2>&1
echo "tests exit $? in $(( $(date +%s) - start )) s"; grep -E "test result|FAILED|failed" $OUT/a1/tests-30.txt | head
start=$(date +%s)
timeout -k 10 200 bash dist/xa/sanitize.sh 30 > $OUT/a1/sanitize30.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - start )) s"; grep -E "ERROR SUMMARY|error" $OUT/a1/sanitize30.txt | head
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout -k 10 90 $S --tool $tool --error-exitcode 1 dist/xa/flashlab stage 30 --batch 1 --heads 2 --kv-heads 1 --seqlen-q 200 --seqlen-k 131 --dim 256 --causal --no-time > $OUT/a1/$tool-30-d256.txt 2>&1
  echo "$tool d256 exit $?"; grep -E "ERROR SUMMARY" $OUT/a1/$tool-30-d256.txt
done
cd $OUT && tar czf a1.tgz a1 && rm -rf a1
