#!/usr/bin/env bash
# Builds one folder that runs on an x86-64 Linux machine with an NVIDIA driver and no
# Rust: the release `flashlab` CLI, every test binary of the workspace, and scripts that
# run them, the binaries xz-compressed (`./unpack.sh` restores them; the scripts run it).
# Usage: scripts/gpu-bundle.sh [OUT_DIR]   (default dist/flashlab-gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist/flashlab-gpu}"
rm -rf "$out"
mkdir -p "$out/tests"

# Progress shows: the first release build of the CLI and the test binaries takes minutes.
cargo build --release --bin flashlab
cp "${CARGO_TARGET_DIR:-target}/release/flashlab" "$out/"

# The GPU tests: the stage crates' integration tests (their `gpu` grids and probes) and
# the workspace's cross-stage GPU test of the timeline kernels (flashlab's `timeline`),
# named <package>-<target> so the stages' `gpu` tests differ. CPU tests stay out: they
# run in CI, and leaving them out keeps the bundle small.
echo "building the test binaries (release)" >&2
cargo test --release --workspace --no-run --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["profile"]["test"]:
        url, frag = msg["package_id"].rsplit("#", 1)
        pkg = frag.split("@")[0] if "@" in frag else url.rstrip("/").split("/")[-1]
        gpu_test = pkg.startswith("stage") or (pkg == "flashlab" and msg["target"]["name"] == "timeline")
        if gpu_test and "test" in msg["target"]["kind"]:
            print(msg["executable"], pkg + "-" + msg["target"]["name"])
' | while read -r exe name; do cp "$exe" "$out/tests/$name"; done

cp scripts/bundle/*.sh "$out/"
chmod +x "$out"/*.sh "$out"/flashlab "$out"/tests/*
# The binaries are mostly embedded fatbins, which xz shrinks about eightfold: packed, the
# folder fits a 64 MiB upload. unpack.sh (run by every script) restores them.
echo "compressing the binaries (xz)" >&2
for binary in "$out"/flashlab "$out"/tests/*; do
    xz -T0 -6 -f "$binary"
done
du -sh "$out"
ls "$out" "$out/tests"
