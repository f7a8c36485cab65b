#!/usr/bin/env bash
# Session 16, call 5 (the same warm machine): FA4's second part, then the decode bench
# again (a repeat of the run of record, same build).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/../fa4-part2/install-fa4.sh" 2>&1 | tail -1
. /tmp/fa4/env.sh
cd "$here" && ./unpack.sh
mkdir -p "$OUT/rep"
start=$(date +%s)
timeout 560 ./flashlab bench --decode --baselines --plots --out "$OUT/rep" > "$OUT/rep/bench.txt" 2>&1
echo "bench exit $? in $(( $(date +%s) - start )) s"
cat "$OUT/rep/decode-table.md" 2>/dev/null
