#!/usr/bin/env bash
# Call F3 (the same warm machine): FlashAttention-4's third part stashed; the measured
# timelines of stages 11, 12, 13 and 16 (d128 seqlen 8192; 13 and 16 causal and at d64
# too), then the tree before this change (a8a7371) over the bench shapes, stages 11-13.
set -u
root="$(pwd)"
bash dist/fa4-part3/install-fa4.sh 2>&1 | tail -1
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/timelines
for spec in "11 128" "12 128" "13 128" "16 128" "13 128 --causal" "16 128 --causal" "13 64" "16 64"; do
  set -- $spec; s=$1; d=$2; c=${3:-}
  name=timeline-$s${c:+-causal}; [ "$d" = 64 ] && name=$name-d64
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim $d $c --blocks 2 --out $OUT/timelines/$name.svg --json $OUT/timelines/$name.json > $OUT/timelines/$name.txt 2>&1
  echo "$name exit $?: $(grep -E 'overhead' $OUT/timelines/$name.txt | head -1)"
done
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('$root/.bundle/flashlab-old.xz'), open('flashlab-old', 'wb'))" && chmod +x flashlab-old
start=$(date +%s)
timeout -k 10 200 ./flashlab-old bench --stages 11,12,13 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/before > $OUT/before-bench.txt 2>&1
echo "bench of a8a7371 exit $? in $(( $(date +%s) - start )) s"
rm -f $OUT/before/*.svg $OUT/before/bench.csv
tar czf $OUT/timelines.tgz -C $OUT timelines && rm -rf $OUT/timelines
