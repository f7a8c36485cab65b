#!/usr/bin/env bash
# Call G1: FlashAttention-4's first part stashed; Nsight Compute on stage 16, d128, 8192
# (flashlab's side only: FA4 is not installed until call G4), and the ncu version.
set -u
root="$(pwd)"
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
ncu --version | tail -1
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/p
for c in "" causal; do
  ncu --clock-control none --kernel-name regex:"_(bf16|f16)_d[0-9]+$" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section SourceCounters --import-source yes -f -o $OUT/p/stage16${c:+-$c} ./flashlab stage 16 --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 ${c:+--causal} > $OUT/p/stage16${c:+-$c}.log 2>&1
  echo "stage16 $c exit $?"; tail -2 $OUT/p/stage16${c:+-$c}.log
  ncu -i $OUT/p/stage16${c:+-$c}.ncu-rep --page source --csv --print-source sass > $OUT/p/stage16${c:+-$c}-sass.csv 2> $OUT/p/sass.err; echo "source page exit $? $(wc -l < $OUT/p/stage16${c:+-$c}-sass.csv) lines"; head -c 600 $OUT/p/sass.err
  ncu -i $OUT/p/stage16${c:+-$c}.ncu-rep --page raw --csv --print-units base > $OUT/p/stage16${c:+-$c}-raw.csv
done
ls -la $OUT/p
tar czf $OUT/p.tgz -C $OUT p && rm -rf $OUT/p
