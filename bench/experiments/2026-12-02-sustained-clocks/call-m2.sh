#!/usr/bin/env bash
# Call M2 (a warm H200 after calls W5-W8 stashed FlashAttention-4's first four wheel parts;
# carrying dist/fa4-part5 and dist/xe, flashlab of this commit, and bench/baselines.py
# without its warm-up's cap of 1000 calls): stage 26, cuDNN and FlashAttention-4 each after
# 2 s of warm-up (FLASHLAB_WARMUP_MS, --warmup-ms), d128 at 4096, 8192 and 16384 and d64 at
# 8192, every row's end stamped, nvidia-smi sampling the SM clock and power every 20 ms.
set -u
mkdir -p $OUT/m2
bash dist/fa4-part5/install-fa4.sh > $OUT/m2/fa4-install.txt 2>&1; echo "fa4 install exit $?"
. /tmp/fa4/env.sh
(cd dist/xe && ./unpack.sh) || exit 1
F=dist/xe/flashlab
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 20 > $OUT/m2/smi.csv 2>&1 &
smi=$!
sleep 2
for round in 1 2; do
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 100 $F bench --stages 26 --seqlens 4096,8192,16384 --dims 128 --causal off --tokens 1 --out $OUT/m2/s26-r$round 2>&1 | stamp > $OUT/m2/s26-r$round.txt
  FLASHLAB_WARMUP_MS=2000 timeout -k 10 100 $F bench --stages 26 --seqlens 8192 --dims 64 --causal off --tokens 1 --out $OUT/m2/s26-d64-r$round 2>&1 | stamp >> $OUT/m2/s26-r$round.txt
  timeout -k 10 150 python3 bench/baselines.py --backends flash-attn-4,sdpa-cudnn --shape 1,16,4096,128 --shape 1,16,8192,128 --shape 1,16,16384,128 --shape 1,16,8192,64 --warmup-ms 2000 2>/dev/null | stamp > $OUT/m2/base-r$round.jsonl
done
kill $smi
grep -h TFLOPS $OUT/m2/s26-r*.txt | grep -v "of light" | cut -c1-120
python3 - $OUT/m2 <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/base-r*.jsonl')):
    for l in open(f):
        t,j=l.split(' ',1)
        try: r=json.loads(j)
        except Exception: continue
        if 'median_ms' in r: print(f.split('/')[-1], t, r.get('name'), r.get('seqlen'), r.get('head_dim'), round(r.get('tflops') or 0,1), r.get('median_ms'), r.get('min_ms'))
PY
cd $OUT && tar czf m2.tgz m2 && rm -rf m2
