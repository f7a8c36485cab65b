#!/usr/bin/env bash
# Call A3: stage 24 against 19 again, the stages in the other order, with shorter
# sequences (1024, 2048), where a block's start and end weigh more.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/a3
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/a3/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/a3/gpu.txt
timeout -k 10 300 ./flashlab bench --stages 24,19 --seqlens 1024,2048,4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --heads 16 --out $OUT/a3/bench > $OUT/a3/bench.txt 2>&1
echo "bench exit $?"; grep -E "^\||^####|failed" $OUT/a3/bench.txt | grep -v -- "---" | cut -c1-120
cd $root
tar czf $OUT/a3.tgz -C $OUT a3 && rm -rf $OUT/a3
