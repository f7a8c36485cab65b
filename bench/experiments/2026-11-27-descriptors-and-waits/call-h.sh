#!/usr/bin/env bash
# Call H (experiment): stage 16 as committed (base) against three variants, each bench twice,
# interleaved, no baselines: va, the wgmma descriptors built once and stepped by constants;
# vb, the mbarrier waits with a suspend-time hint (try_wait.parity ..., 0x989680 ns); vab, both.
set -u
cd .bundle
for b in base va vb vab; do python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('flashlab-$b.xz'), open('flashlab-$b', 'wb'))" && chmod +x flashlab-$b; done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
args="--stages 16 --seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1"
for round in 1 2; do for b in base va vb vab; do
  timeout -k 5 90 ./flashlab-$b bench $args --out $OUT/$b$round > $OUT/$b$round.txt 2>&1; echo "$b$round exit $? $(grep -c ' ok$' $OUT/$b$round.txt) rows ok"
done; done
rm -rf $OUT/*/
for b in base va vb vab; do for r in 1 2; do echo "$b$r $(grep TFLOPS $OUT/$b$r.txt | sed -E 's/.*s([0-9]+) d([0-9]+)( causal)?: ([0-9.]+) TFLOPS.*/\2\3:\1=\4/' | tr '\n' ' ')"; done; done
