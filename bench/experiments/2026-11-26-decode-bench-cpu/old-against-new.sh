#!/usr/bin/env bash
# Session 17: the CPU side of one decode bench shape (D256, batch 8, 32k keys, 18 rows),
# the build of session 16 (old oracle) against this session's, on one machine.
# Ran from dist/s17-h: flashlab-old.xz is session 16's bundled flashlab (7ef4ebd), and
# ../s17-g the bundle of scripts/gpu-bundle.sh at 4e6e216, unpacked.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
python3 -c 'import lzma,shutil,sys
with lzma.open(sys.argv[1]) as s, open(sys.argv[2],"wb") as d: shutil.copyfileobj(s,d)' "$here/flashlab-old.xz" "$here/flashlab-old"
chmod +x "$here/flashlab-old"
new="$here/../s17-g/flashlab"
mkdir -p "$OUT/h"
for b in new old; do
  exe="$new"; [ $b = old ] && exe="$here/flashlab-old"
  echo "== $b"
  /usr/bin/time -f "$b: %e s wall, %U s user, %M KiB max" timeout 280 "$exe" bench --decode --decode-dim 256 --decode-batches 8 --decode-cache-lens 32768 --out "$OUT/h/$b" > "$OUT/h/$b.txt" 2>&1
  tail -1 "$OUT/h/$b.txt"; grep "^| 8 " "$OUT/h/$b.txt"
done
