#!/usr/bin/env bash
# The call as it ran: the tree before the roles (flashlab-old, a8a7371), the roles with the
# mask split restored (flashlab-new) and the same with the old register split (flashlab-v1),
# each bench twice, interleaved, no baselines.
set -u
cd .bundle
for b in old new v1; do python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('flashlab-$b.xz'), open('flashlab-$b', 'wb'))" && chmod +x flashlab-$b; done
args="--seqlens 4096,8192,16384 --dims 64,128 --causal both --tokens 1"
for round in 1 2; do
  timeout -k 5 120 ./flashlab-old bench --stages 11,12,13 $args --out $OUT/old$round > $OUT/old$round.txt 2>&1
  timeout -k 5 150 ./flashlab-new bench --stages 11,12,13,16 $args --out $OUT/new$round > $OUT/new$round.txt 2>&1
  timeout -k 5 80 ./flashlab-v1 bench --stages 16 $args --out $OUT/v1$round > $OUT/v1$round.txt 2>&1
done
