#!/usr/bin/env bash
# Call M3 (a warm H200 after W9-W12 stashed FlashAttention-4's wheel parts 1-4; carrying
# dist/fa4-part5 and dist/xe): the memory traffic behind the power, one launch each under
# Nsight Compute, d128, seqlen 8192, no mask: stage 26, stage 16 and FlashAttention-4.
set -u
mkdir -p $OUT/m3
bash dist/fa4-part5/install-fa4.sh > $OUT/m3/fa4-install.txt 2>&1; echo "fa4 install exit $?"
. /tmp/fa4/env.sh
(cd dist/xe && ./unpack.sh) || exit 1
F=dist/xe/flashlab
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
m=gpu__time_duration.sum,sm__cycles_elapsed.max,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_op_read_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum,smsp__inst_executed.sum
for s in 26 16; do
  timeout -k 5 120 $ncu --clock-control none --kernel-name regex:"_(bf16|f16)_d[0-9]+$" --launch-count 1 --metrics $m --csv --print-units base $F stage $s --no-time --no-check --seed 1 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/m3/stage$s.csv 2> $OUT/m3/stage$s.err
  echo "stage $s ncu exit $?"
done
timeout -k 5 180 $ncu --clock-control none --profile-from-start off --metrics $m --csv --print-units base python3 bench/profile/fa4_once.py 8192 128 > $OUT/m3/fa4.csv 2> $OUT/m3/fa4.err
echo "fa4 ncu exit $?"
for f in $OUT/m3/*.csv; do echo "== $(basename $f)"; grep -E '"(gpu__time|sm__cycles|dram__|lts__|l1tex__m|smsp__inst)' $f | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | tr -d '"' | head -14; done
cd $OUT && tar czf m3.tgz m3 && rm -rf m3
