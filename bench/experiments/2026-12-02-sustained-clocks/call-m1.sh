#!/usr/bin/env bash
# Call M1 (the warm H200 that calls W1-W4 left FlashAttention-4's first four wheel parts on,
# carrying dist/fa4-part5 and dist/xe: flashlab of this commit): stage 26 beside cuDNN and
# FlashAttention-4 at d64 and d128 without the mask, first with the bench's 50 ms of warm-up
# (the run of record's protocol), then with 2 s of it for every row, stages and baselines
# alike (FLASHLAB_WARMUP_MS), so each is timed in the state a sustained load leaves the GPU
# in; nvidia-smi samples the SM clock and the power every 20 ms throughout.
set -u
mkdir -p $OUT/m1
bash dist/fa4-part5/install-fa4.sh > $OUT/m1/fa4-install.txt 2>&1; echo "fa4 install exit $?: $(tail -1 $OUT/m1/fa4-install.txt | cut -c1-120)"
. /tmp/fa4/env.sh
(cd dist/xe && ./unpack.sh) || exit 1
F=dist/xe/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/m1/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 20 > $OUT/m1/smi.csv 2>&1 &
smi=$!
phase() { echo "$1 $(date +%s.%N)" >> $OUT/m1/phases.txt; }
show() { grep -E "TFLOPS" $1 | grep -v "of light" | sed -E 's/^\[[a-z]+ [0-9]+\/[0-9]+\] //' | cut -c1-100; }
sleep 2
phase cold-start
FLASHLAB_BASELINES_BACKENDS=sdpa-cudnn,flash-attn-4 timeout -k 10 150 $F bench --stages 26 --seqlens 4096,8192,16384 --dims 64,128 --causal off --tokens 1 --baselines --out $OUT/m1/cold > $OUT/m1/cold.txt 2>&1
echo "cold bench exit $?"; show $OUT/m1/cold.txt
phase cold-end
sleep 5
phase hot-start
FLASHLAB_WARMUP_MS=2000 FLASHLAB_BASELINES_BACKENDS=sdpa-cudnn,flash-attn-4 timeout -k 10 240 $F bench --stages 26 --seqlens 4096,8192,16384 --dims 64,128 --causal off --tokens 1 --baselines --out $OUT/m1/hot > $OUT/m1/hot.txt 2>&1
echo "hot bench exit $?"; show $OUT/m1/hot.txt
phase hot-end
kill $smi
cd $OUT && tar czf m1.tgz m1 && rm -rf m1
