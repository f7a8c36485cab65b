#!/usr/bin/env bash
# Call C4 (the same warm machine): FlashAttention-4's third part stashed; Nsight Compute on
# stage 20 at d128, seqlen 8192, beside C3's stage 27 (the same sections).
set -u
bash dist/fa4-part3/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu
mkdir -p $OUT/q
for s in 20; do
  ncu --clock-control none --kernel-name regex:"^fp8_bf16_d[0-9]+$" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section SourceCounters --import-source yes -f -o $OUT/q/stage$s ./flashlab stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/q/stage$s.log 2>&1
  echo "stage$s exit $?"; tail -2 $OUT/q/stage$s.log
  ncu -i $OUT/q/stage$s.ncu-rep --page source --csv --print-source sass > $OUT/q/stage$s-sass.csv 2> $OUT/q/sass.err; echo "source page exit $? $(wc -l < $OUT/q/stage$s-sass.csv) lines"
  ncu -i $OUT/q/stage$s.ncu-rep --page raw --csv --print-units base > $OUT/q/stage$s-raw.csv
  gzip -f $OUT/q/stage$s-sass.csv; rm -f $OUT/q/stage$s.ncu-rep
done
tar czf $OUT/q.tgz -C $OUT q && rm -rf $OUT/q
