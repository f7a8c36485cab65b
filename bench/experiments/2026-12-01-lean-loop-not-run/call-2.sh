#!/usr/bin/env bash
# Call 2 (right after call 1, the machine still warm), carrying dist/flashlab-134/ (the
# `flashlab` binary alone, xz-compressed, built with NVCC pointing at CUDA 13.4's nvcc:
# `NVCC=/path/to/cuda134/bin/nvcc cargo build --release` on the patched checkout): every
# stage-26 shape checked once under the 13.4 build (each run is checked against the
# oracle), then stages 19 and 26 of both builds in two interleaved bench rounds.
set -u
mkdir -p $OUT/c2 && cd /tmp/lean && xz -dc "$OLDPWD/dist/flashlab-134/flashlab.xz" > flashlab-134 && chmod +x flashlab-134
for d in 64 128 256; do for c in "" --causal; do
  timeout -k 10 60 ./flashlab-134 stage 26 --dim $d $c --seqlen 4096 >> $OUT/c2/stage26-134.txt 2>&1; echo "26 (13.4) d$d $c exit $?"
  timeout -k 10 60 ./flashlab-134 stage 19 --dim $d $c --seqlen 4096 >> $OUT/c2/stage19-134.txt 2>&1; echo "19 (13.4) d$d $c exit $?"
done; done
for round in 1 2; do
  for build in $( [ $round = 1 ] && echo "130 134" || echo "134 130" ); do
    timeout -k 10 200 ./flashlab-$build bench --stages 19,26 --seqlens 4096,8192,16384 --dims 64,128,256 --causal both --tokens 1 --out $OUT/c2/bench-$build-r$round > $OUT/c2/bench-$build-r$round.txt 2>&1
    echo "bench build $build round $round exit $?"
  done
done
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $OUT/c2
