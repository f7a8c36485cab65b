#!/usr/bin/env bash
# Call L1 (a fresh H200, carrying dist/xa: the flashlab binary of this commit's parent):
# which unit asks the L2 for the read sectors that separate stage 26 from stage 16 (and
# FlashAttention-4) in ../2026-12-02-sustained-clocks/ call M3. One launch each under Nsight
# Compute, d128, seqlen 8192, no mask, every lts__t_{sectors,requests}_src{unit,node}_* read metric.
set -u
mkdir -p $OUT/l1
(cd dist/xa && ./unpack.sh) || exit 1
F=dist/xa/flashlab
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout -k 5 60 $ncu --query-metrics --chip gh100 > $OUT/l1/query.txt 2>&1
grep -E '^lts__t_(sectors|requests)_src' $OUT/l1/query.txt | awk '{print $1}' > $OUT/l1/names.txt
base=gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum,lts__t_sectors_op_write.sum,lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum,smsp__inst_executed.sum
src=$(grep -E '(op_read|op_write|op_atom|op_red)?$' $OUT/l1/names.txt | sed 's/$/.sum/' | paste -sd, -)
for s in 26 16 19; do
  timeout -k 5 150 $ncu --clock-control none --kernel-name regex:"_(bf16|f16)_d[0-9]+$" --launch-count 1 --metrics $base,$src --csv --print-units base $F stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/l1/stage$s.csv 2> $OUT/l1/stage$s.err
  echo "stage $s ncu exit $?"
done
for f in $OUT/l1/stage*.csv; do echo "== $(basename $f)"; grep -E '"(gpu__time|lts__|l1tex__m|smsp__inst)' $f | awk -F'","' '{print $(NF-2), $NF}' | tr -d '"' | awk '$2+0>0' ; done
cd $OUT && tar czf l1.tgz l1 && rm -rf l1
