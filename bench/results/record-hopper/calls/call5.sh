#!/usr/bin/env bash
# Session 10, call 5 (after call 4 stashed FlashAttention-4's first part): FA4 installed,
# then the issue's shapes (batch 1, 16 heads, bf16, seqlen 4096/8192/16384, d64 and d128,
# causal both) for stages 9-13 with every baseline in the same run, and the baselines at d256.
cd "$(dirname "$0")"
mkdir -p $OUT/logs; L=$OUT/logs
nvidia-smi -L > $L/gpu.txt
bash ../fa4-part2/install-fa4.sh > $L/fa4-install.txt 2>&1; echo "rc $?" >> $L/fa4-install.txt; tail -n 2 $L/fa4-install.txt
. /tmp/fa4/env.sh
timeout -k 5 420 ./flashlab bench --stages 9,10,11,12,13 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1 --baselines --plots --out $L/hopper > $L/bench.txt 2>&1; echo "rc $?" >> $L/bench.txt
tail -n 3 $L/bench.txt
cat $L/hopper/results-table.md 2>/dev/null | head -60
for c in "" ",causal"; do for S in 8192; do
  timeout -k 5 60 python3 ../../bench/baselines.py --shape 1,16,$S,256$c --backends sdpa-flash,sdpa-cudnn,flash-attn-4 >> $L/d256.jsonl 2>>$L/d256.err
done; done
python3 -c "
import json,sys
for l in open('$L/d256.jsonl'):
    r=json.loads(l)
    if r.get('kind')!='meta': print(r.get('name'), r.get('seqlen'), r.get('head_dim'), r.get('causal'), r.get('status'), r.get('tflops'))
"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
