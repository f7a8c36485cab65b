#!/usr/bin/env bash
# round.sh PART N ORDER: one device call of rounds B1-B5 (a warm H200 that ran A1, carrying
# dist/fa4-partPART; dist/xa is still there): FlashAttention-4's part PART stashed, then round
# N of stages 29 and 30 in the order ORDER at d64, d128 and d256, seqlen 4096-16384, causal
# and not; after round 2 the timelines of stage 30 at d128 and d64, seqlen 8192.
set -u
part=$1; n=$2; order=$3
bash dist/fa4-part$part/install-fa4.sh 2>&1 | tail -1
mkdir -p $OUT/b$n
F=dist/xa/flashlab
start=$(date +%s)
timeout -k 10 150 $F bench --stages $order --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/b$n/bench > $OUT/b$n/bench.txt 2>&1
echo "round $n ($order) exit $? in $(( $(date +%s) - start )) s"
python3 bench/records/h200-prefill/loop-invariants/calls/ratio.py $OUT/b$n/bench/bench.json 2>&1 | tail -6
if [ "$n" = 2 ]; then
  for d in 128 64; do
    timeout -k 5 60 $F timeline 30 --batch 1 --heads 16 --seqlen 8192 --dim $d --blocks 2 --out $OUT/b$n/timeline-30-d$d.svg --json $OUT/b$n/timeline-30-d$d.json > $OUT/b$n/timeline-30-d$d.txt 2>&1
    echo "timeline d$d exit $?"; grep -E "consumer|producer" $OUT/b$n/timeline-30-d$d.txt | cut -c1-90
  done
fi
cd $OUT && tar czf b$n.tgz b$n && rm -rf b$n
