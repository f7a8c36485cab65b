#!/usr/bin/env bash
# Session 18, call B (the same warm machine): FA4's second part, then the decode record
# with the slab read as roofline and floor, then the floor experiment beside it.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/../fa4-part2/install-fa4.sh" 2>&1 | tail -1
. /tmp/fa4/env.sh
cd "$here" && xz -d -k -f flashlab.xz && chmod +x flashlab floor
mkdir -p "$OUT/rec"
echo "build: $(cat COMMIT)" > "$OUT/rec/build.txt"
start=$(date +%s)
timeout 480 ./flashlab bench --decode --baselines --plots --out "$OUT/rec" > "$OUT/rec/bench.txt" 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
timeout 60 ./floor 1 33.554432 134.217728 1073.741824 > "$OUT/rec/floor.txt" 2>&1
echo "floor exit $?"
grep -E "MB|ceiling_read|slabs 256 x 2|slabs of 256 x 4" "$OUT/rec/floor.txt"
tail -3 "$OUT/rec/bench.txt"
cat "$OUT/rec/decode-table.md" 2>/dev/null
