#!/usr/bin/env bash
# The bundle's binaries travel xz-compressed (the embedded fatbins shrink about eightfold,
# so the folder fits a 64 MiB upload); this unpacks each `X.xz` beside it as `X`, once.
# The other scripts run it themselves; run it before calling ./flashlab directly. Needs
# python3 (its lzma module), which every machine with a CUDA toolkit's tools has.
set -euo pipefail
cd "$(dirname "$0")"
for packed in flashlab.xz tests/*.xz; do
    [ -e "$packed" ] || continue
    binary="${packed%.xz}"
    if [ ! -x "$binary" ] || [ "$packed" -nt "$binary" ]; then
        python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$packed" "$binary"
        chmod +x "$binary"
    fi
done
