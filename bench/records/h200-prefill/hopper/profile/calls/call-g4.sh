#!/usr/bin/env bash
# Call G4: FlashAttention-4 installed; Nsight Compute on its Hopper forward at d128, 8192,
# causal and not, with the sections stage 16 got in G1 (bench/profile/fa4_once.py).
set -u
root="$(pwd)"
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?"
. /tmp/fa4/env.sh
mkdir -p $OUT/p
for c in "" causal; do
  ncu --clock-control none --profile-from-start off --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section SourceCounters -f -o $OUT/p/fa4${c:+-$c} python3 $root/bench/profile/fa4_once.py 8192 128 $c > $OUT/p/fa4${c:+-$c}.log 2>&1
  echo "fa4 $c exit $?"; tail -3 $OUT/p/fa4${c:+-$c}.log
  ncu -i $OUT/p/fa4${c:+-$c}.ncu-rep --page source --csv --print-source sass > $OUT/p/fa4${c:+-$c}-sass.csv 2> $OUT/p/sass.err; echo "source page exit $? $(wc -l < $OUT/p/fa4${c:+-$c}-sass.csv) lines"
  ncu -i $OUT/p/fa4${c:+-$c}.ncu-rep --page raw --csv --print-units base > $OUT/p/fa4${c:+-$c}-raw.csv
done
ls -la $OUT/p
tar czf $OUT/p.tgz -C $OUT p && rm -rf $OUT/p
