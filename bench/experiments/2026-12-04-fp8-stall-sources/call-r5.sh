#!/usr/bin/env bash
# Call R5 (an H200, carrying dist/xr, the bundle of stage 31's record): Nsight Compute's
# source counters (per-SASS-instruction warp-stall samples) on stage 28 at d128 and d64 and
# stage 29 at d128, seqlen 8192, non-causal, to find which instructions the consumers' stalls
# sit on.
set -u
mkdir -p $OUT/r5
(cd dist/xr && ./unpack.sh) || exit 1
F=dist/xr/flashlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/r5/gpu.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
run() {  # name kernel-regex stage dim
  timeout -k 10 200 $NCU --kernel-name regex:"$2" --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight -f -o $OUT/r5/$1 $F stage $3 --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim $4 > $OUT/r5/$1.log 2>&1
  echo "ncu $1 exit $?"
  $NCU --import $OUT/r5/$1.ncu-rep --page source --csv --print-source sass > $OUT/r5/$1-sass.csv 2> $OUT/r5/$1-sass.err
  $NCU --import $OUT/r5/$1.ncu-rep --print-summary none > $OUT/r5/$1.txt 2>&1
  echo "$1 source page: $(wc -l < $OUT/r5/$1-sass.csv) lines"
}
run s28-d128 '^three_consumers_bf16_d128$' 28 128
run s28-d64 '^three_consumers_bf16_d64$' 28 64
run s29-d128 '^ring_bf16_d128$' 29 128
rm -f $OUT/r5/*.ncu-rep
cd $OUT && tar czf r5.tgz r5 && rm -rf r5
