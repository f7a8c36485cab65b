#!/usr/bin/env bash
# Call F4 (the same warm machine): FlashAttention-4's last part, installed; the Hopper run
# of record: stages 9-13 and 16 with every baseline in the same run, then stage 13 of the
# tree before this change (a8a7371) on the same shapes.
set -u
bash dist/fa4-part4/install-fa4.sh > $OUT/fa4-install.txt 2>&1; echo "fa4 install exit $?"; tail -n 1 $OUT/fa4-install.txt
. /tmp/fa4/env.sh
cd dist/flashlab-gpu && ./unpack.sh
start=$(date +%s)
timeout -k 10 450 ./flashlab bench --stages 9,10,11,12,13,16 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $OUT/record > $OUT/bench.txt 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
[ -x flashlab-old ] || { python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('../../.bundle/flashlab-old.xz'), open('flashlab-old', 'wb'))" && chmod +x flashlab-old; }
timeout -k 10 100 ./flashlab-old bench --stages 13 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --out $OUT/before13 > $OUT/before13-bench.txt 2>&1
echo "stage 13 of a8a7371 exit $?"
rm -f $OUT/before13/*.svg $OUT/before13/bench.csv
grep -E "^\| |^#" $OUT/record/results-table.md | cut -c1-220 | head -60
grep -E "TFLOPS" $OUT/before13-bench.txt | sed -E 's/^\[stages [0-9]+\/[0-9]+\] //'
tar czf $OUT/record.tgz -C $OUT record before13 && rm -rf $OUT/record $OUT/before13
