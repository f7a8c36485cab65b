#!/usr/bin/env bash
# Call C3: stage 24 with the cheaper transposer: its GPU tests, the sanitizer, the bench of
# 20 and 24 twice, with the clocks logged, a timeline, and Nsight Compute's issue and
# shared-memory counters of both at seqlen 8192.
set -u
root="$(pwd)"
cd dist/flashlab-gpu && ./unpack.sh
mkdir -p $OUT/c3/timelines
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv | tee $OUT/c3/gpu.txt
echo "build: $(cat $root/.bundle/COMMIT)" | tee -a $OUT/c3/gpu.txt
timeout -k 10 150 ./tests/stage24-v-transpose-gpu > $OUT/c3/test-stage24.txt 2>&1
echo "stage 24 tests exit $?: $(grep 'test result' $OUT/c3/test-stage24.txt | cut -c1-80)"; grep -E "panicked|FAILED" $OUT/c3/test-stage24.txt | head -4 | cut -c1-300
timeout -k 10 150 ./sanitize.sh 24 > $OUT/c3/sanitize24.txt 2>&1
echo "sanitize 24 exit $?: $(tail -n 1 $OUT/c3/sanitize24.txt)"
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout -k 10 100 $S --tool racecheck --error-exitcode 1 ./flashlab stage 24 --batch 1 --heads 2 --seqlen-q 300 --seqlen-k 1100 --dim 128 --no-time > $OUT/c3/racecheck-long.txt 2>&1
echo "racecheck 1100 keys exit $?: $(grep -E 'RACECHECK SUMMARY' $OUT/c3/racecheck-long.txt)"
for r in 1 2; do
  timeout -k 10 150 ./flashlab bench --stages 20,24 --seqlens 4096,8192,16384 --dims 128 --causal both --tokens 1 --heads 16 --out $OUT/c3/bench$r > $OUT/c3/bench$r.txt 2>&1
  echo "bench $r exit $?: $(grep 'speed of light:' $OUT/c3/bench$r.txt)"; grep -E "^\| [0-9]|^####" $OUT/c3/bench$r.txt | cut -c1-120
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv | tee -a $OUT/c3/gpu.txt
timeout -k 5 60 ./flashlab stage 24 --batch 1 --heads 16 --seqlen 8192 --dim 128 > $OUT/c3/run24.txt 2>&1
echo "stage 24: $(grep -E 'speed|prepare' $OUT/c3/run24.txt | cut -c1-90 | tr '\n' '|')"
timeout -k 5 60 ./flashlab timeline 24 --batch 1 --heads 16 --seqlen 8192 --dim 128 --blocks 2 --out $OUT/c3/timelines/timeline-24.svg --json $OUT/c3/timelines/timeline-24.json > $OUT/c3/timelines/timeline-24.txt 2>&1
echo "timeline 24 exit $?: $(grep -E 'overhead' $OUT/c3/timelines/timeline-24.txt | head -1 | cut -c1-100)"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for n in 20 24; do
  timeout -k 10 120 $NCU --section SpeedOfLight --section WarpStateStats --section InstructionStats --metrics sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum -k regex:"^(fp8|v_transpose)_bf16" -c 1 ./flashlab stage $n --batch 1 --heads 16 --seqlen 8192 --dim 128 --no-time --no-check > $OUT/c3/ncu-$n.txt 2>&1
  echo "ncu $n exit $?: $(grep -E 'sm__inst_executed.sum|issue_active|gmma_cycles|bank_conflicts|wavefronts_mem_shared|Duration' $OUT/c3/ncu-$n.txt | tr -s ' ' | tr '\n' '|' | cut -c1-400)"
done
cd $root
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $OUT/c3
