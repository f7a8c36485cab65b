#!/usr/bin/env bash
# Session 9, call H: stage 23 with dK split in two halves around dQ, dQ's tile stored while the second runs
# (.bundle/var23, a bundle of the working tree with that change), beside the bundle of
# 87f7c77: the variant's GPU tests, timeline tests and sanitizer; then flashlab stage 23 of
# each, alternating, twice, at the run of record's 12 shapes; a timeline of the variant.
set -u
root="$(pwd)"
base=$root/dist/flashlab-gpu var=$root/.bundle/var23
(cd $base && ./unpack.sh > /dev/null); (cd $var && ./unpack.sh > /dev/null)
mkdir -p $OUT/h
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $OUT/h/gpu.txt
cd $var
timeout -k 10 120 ./tests/stage23-hopper-backward-gpu --include-ignored --test-threads=1 > $OUT/h/test-var23.txt 2>&1
echo "var tests exit $?: $(grep 'test result' $OUT/h/test-var23.txt | cut -c1-80)"
grep -E "panicked|FAILED" $OUT/h/test-var23.txt | head -4 | cut -c1-300
timeout -k 10 150 ./tests/flashlab-timeline --include-ignored --test-threads=1 > $OUT/h/test-var-timeline.txt 2>&1
echo "var timeline tests exit $?: $(grep 'test result' $OUT/h/test-var-timeline.txt | cut -c1-80)"
timeout -k 10 120 ./sanitize.sh 23 > $OUT/h/sanitize-var23.txt 2>&1
echo "var sanitize 23 exit $?: $(tail -n 1 $OUT/h/sanitize-var23.txt)"
timeout -k 5 60 ./flashlab timeline 23 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/h/timeline-var23.svg --json $OUT/h/timeline-var23.json > $OUT/h/timeline-var23.txt 2>&1
echo "var timeline exit $?"
for round in 1 2; do for d in 128 64; do for c in "" --causal; do for s in 4096 8192 16384; do
  for who in base var; do
    dir=$base; [ $who = var ] && dir=$var
    r=$(cd $dir && timeout -k 5 60 ./flashlab stage 23 --batch 1 --heads 16 --seqlen $s --dim $d $c --no-check 2>&1 | grep -E "^speed" | awk '{print $2}')
    echo "round $round d$d $c s$s $who $r" | tee -a $OUT/h/times.txt > /dev/null
  done
done; done; done; done
python3 - $OUT/h/times.txt <<'PY'
import sys, collections
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    key = " ".join(f[2:-2]); who = f[-2]
    try: t[(key, who)].append(float(f[-1]))
    except ValueError: pass
keys = sorted({k for k, _ in t}, key=lambda k: (k.split()[0], "causal" in k, int(k.split()[-1][1:])))
for k in keys:
    b, v = t[(k, "base")], t[(k, "var")]
    if b and v: print(f"{k:24s} base {' '.join(f'{x:6.1f}' for x in b)}   var {' '.join(f'{x:6.1f}' for x in v)}   var/base {sum(v)/len(v)/(sum(b)/len(b)):.3f}")
PY
cd $root
tar czf $OUT/h.tgz -C $OUT h && rm -rf $OUT/h
