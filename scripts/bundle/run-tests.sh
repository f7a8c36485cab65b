#!/usr/bin/env bash
# Runs every test binary of the bundle, GPU tests included. Exit status: failures > 0.
cd "$(dirname "$0")"
./unpack.sh
failed=0
for t in tests/*; do
    case "$t" in *.xz) continue ;; esac
    echo "== $t"
    "$t" --include-ignored --test-threads=1 "$@" || failed=$((failed + 1))
done
echo "test binaries failed: $failed"
exit "$failed"
