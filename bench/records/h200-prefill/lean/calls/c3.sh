#!/usr/bin/env bash
# Call C3 (the same warm machine): FlashAttention-4's second part stashed; Nsight Compute
# on stages 26 and 27 at d128, seqlen 8192 (one launch each, the sections of the profile
# of record, SASS source counters for `flashlab schedule --profile`).
set -u
bash dist/fa4-part2/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu
mkdir -p $OUT/p
for s in 26 27; do
  ncu --clock-control none --kernel-name regex:"^(lean|leanfp8)_bf16_d[0-9]+$" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section SourceCounters --import-source yes -f -o $OUT/p/stage$s ./flashlab stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/p/stage$s.log 2>&1
  echo "stage$s exit $?"; tail -2 $OUT/p/stage$s.log
  ncu -i $OUT/p/stage$s.ncu-rep --page source --csv --print-source sass > $OUT/p/stage$s-sass.csv 2> $OUT/p/sass.err; echo "source page exit $? $(wc -l < $OUT/p/stage$s-sass.csv) lines"
  ncu -i $OUT/p/stage$s.ncu-rep --page raw --csv --print-units base > $OUT/p/stage$s-raw.csv
  gzip -f $OUT/p/stage$s-sass.csv; rm -f $OUT/p/stage$s.ncu-rep
done
tar czf $OUT/p.tgz -C $OUT p && rm -rf $OUT/p
