#!/usr/bin/env bash
# Call L2 (a fresh H200, carrying dist/xa): the same L2 counters for cuDNN's kernel at the
# shape of call L1, and for stages 19 and 26 with the causal mask (d128, seqlen 8192).
set -u
mkdir -p $OUT/l2
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
m=gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum,smsp__inst_executed.sum
for s in 26 19; do
  timeout -k 5 120 $ncu --clock-control none --kernel-name regex:"_(bf16|f16)_d[0-9]+$" --launch-count 1 --metrics $m --csv --print-units base $F stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 --causal > $OUT/l2/stage$s-causal.csv 2> $OUT/l2/stage$s-causal.err
  echo "stage $s causal ncu exit $?"
done
for c in "" causal; do
  timeout -k 5 180 $ncu --clock-control none --profile-from-start off --metrics $m --csv --print-units base python3 bench/profile/cudnn_once.py 8192 128 $c > $OUT/l2/cudnn$c.csv 2> $OUT/l2/cudnn$c.err
  echo "cudnn $c ncu exit $?"
done
for f in $OUT/l2/*.csv; do echo "== $(basename $f)"; grep -E '"(gpu__time|lts__|l1tex__m|dram__|smsp__inst)' $f | awk -F'","' '{print $5, $(NF-2), $NF}' | tr -d '"' | cut -c1-150; done
cd $OUT && tar czf l2.tgz l2 && rm -rf l2
