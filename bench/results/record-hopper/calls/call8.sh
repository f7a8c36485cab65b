#!/usr/bin/env bash
# Session 10, call 8 (after call 7 stashed FlashAttention-4's first part): FA4 installed,
# then the issue's shapes (batch 1, 16 heads, bf16, seqlen 4096/8192/16384, d64 and d128,
# causal both) for stages 9-13 with every baseline in the same run, stage 13's d64 timeline
# (three consumers), and the baselines at d256.
cd "$(dirname "$0")"
# flashlab travels xz-compressed (19 MB -> 2 MB) so it fits one call beside the wheels.
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('flashlab.xz'), open('flashlab', 'wb'))" && chmod +x flashlab
mkdir -p $OUT/logs; L=$OUT/logs
nvidia-smi -L > $L/gpu.txt
bash ../fa4-part2/install-fa4.sh > $L/fa4-install.txt 2>&1; echo "rc $?" >> $L/fa4-install.txt; tail -n 2 $L/fa4-install.txt
. /tmp/fa4/env.sh
timeout -k 5 400 ./flashlab bench --stages 9,10,11,12,13 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $L/hopper > $L/bench.txt 2>&1; echo "rc $?" >> $L/bench.txt
tail -n 3 $L/bench.txt
grep -E "^\| (4096|8192|16384)" $L/hopper/results-table.md
mkdir -p $L/timelines
for d in 64; do for s in 12 13; do
  timeout -k 5 60 ./flashlab timeline $s --batch 1 --heads 16 --seqlen 8192 --dim $d --blocks 2 --out $L/timelines/timeline-$s-d$d.svg --json $L/timelines/timeline-$s-d$d.json > $L/timelines/timeline-$s-d$d.txt 2>&1; echo "rc $?" >> $L/timelines/timeline-$s-d$d.txt
  grep -E "overhead|consumer  softmax" $L/timelines/timeline-$s-d$d.txt
done; done
for c in "" ",causal"; do
  timeout -k 5 60 python3 ../../bench/baselines.py --shape 1,16,8192,256$c --backends sdpa-flash,sdpa-cudnn,flash-attn-4 >> $L/d256.jsonl 2>>$L/d256.err
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
