#!/usr/bin/env bash
# Call E1: stage 24 with its addresses from fragments.cuh: its GPU tests, the sanitizer, the
# bench of 20 and 24, and Nsight Compute's per-instruction shared-memory counters of stage 24
# (where the bank conflicts it counts are).
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/e1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/e1/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/e1/gpu.txt
timeout -k 10 150 ./tests/stage24-v-transpose-gpu > $OUT/e1/test-stage24.txt 2>&1
echo "stage 24 tests exit $?: $(grep 'test result' $OUT/e1/test-stage24.txt | cut -c1-80)"; grep -E "panicked|FAILED" $OUT/e1/test-stage24.txt | head -4 | cut -c1-300
timeout -k 10 150 ./sanitize.sh 24 > $OUT/e1/sanitize24.txt 2>&1
echo "sanitize 24 exit $?: $(tail -n 1 $OUT/e1/sanitize24.txt)"
timeout -k 10 150 ./flashlab bench --stages 20,24 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --heads 16 --out $OUT/e1/bench > $OUT/e1/bench.txt 2>&1
echo "bench exit $?: $(grep 'speed of light:' $OUT/e1/bench.txt)"; grep -E "^\| [0-9]|^####" $OUT/e1/bench.txt | cut -c1-120
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout -k 10 150 $NCU --section SourceCounters --import-source no -k regex:"^v_transpose_bf16" -c 1 -o $OUT/e1/ncu24 ./flashlab stage 24 --batch 1 --heads 16 --seqlen 4096 --dim 128 --no-time --no-check > $OUT/e1/ncu24-run.txt 2>&1
echo "ncu exit $?"
timeout -k 10 60 $NCU --import $OUT/e1/ncu24.ncu-rep --page source --csv --print-source sass > $OUT/e1/ncu24-sass.csv 2>&1
echo "sass csv exit $?: $(wc -l < $OUT/e1/ncu24-sass.csv) lines"
python3 - $OUT/e1/ncu24-sass.csv <<'PY' | tee $OUT/e1/conflicts.txt
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
h = rows[hdr]
src, ex = h.index("Source"), h.index("L1 Wavefronts Shared Excessive")
tot = 0
hits = []
for r in rows[hdr + 1:]:
    if len(r) <= ex: continue
    try: v = float(r[ex].replace(",", ""))
    except ValueError: continue
    tot += v
    if v > 0: hits.append((v, r[src].strip()))
hits.sort(reverse=True)
print("excessive shared wavefronts in all:", tot)
for v, s in hits[:25]: print(int(v), s)
PY
rm -f $OUT/e1/ncu24.ncu-rep
gzip -f $OUT/e1/ncu24-sass.csv
cd $root
tar czf $OUT/e1.tgz -C $OUT e1 && rm -rf $OUT/e1
