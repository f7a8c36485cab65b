#!/usr/bin/env bash
# build.sh: what call-a1.sh carries, built on a machine without a GPU. From the repository root
# of a checkout (the pinned CUDA 13.0 in .toolchain, `just cuda`): the checkout's flashlab
# (the base), then in a temporary worktree with fp8-two-units.patch.txt applied three builds
# of flashlab with 1, 2 and 3 of each 8 exponentials on the polynomial (FLASHLAB_NVCC_FLAGS
# passes -DFLASHLAB_POLY_OF_8 to nvcc), and the 2-of-8 build's stage 20 GPU test binary and
# sanitize.sh beside its flashlab; all xz-compressed into dist/pe/ (17 MiB).
set -euo pipefail
root=$(pwd)
here=$root/bench/experiments/2026-12-02-fp8-two-units
tmp=$(mktemp -d)
wt=$tmp/wt
git worktree add -q --detach "$wt" HEAD
trap 'git worktree remove --force "$wt"; rm -rf "$tmp"' EXIT
ln -s "$root/.toolchain" "$wt/.toolchain"
(cd "$wt" && git apply "$here/fp8-two-units.patch.txt")
out=$root/dist/pe
rm -rf "$out" && mkdir -p "$out/base" "$out/p2/tests"
cargo build --release --bin flashlab
xz -T0 -6 -c "${CARGO_TARGET_DIR:-target}/release/flashlab" > "$out/base/flashlab.xz"
for k in 1 2 3; do
    (cd "$wt" && FLASHLAB_NVCC_FLAGS="-DFLASHLAB_POLY_OF_8=$k" CARGO_TARGET_DIR="$tmp/target" cargo build --release --bin flashlab)
    dir=$out/p$k && mkdir -p "$dir"
    xz -T0 -6 -c "$tmp/target/release/flashlab" > "$dir/flashlab.xz"
done
exe=$(cd "$wt" && FLASHLAB_NVCC_FLAGS="-DFLASHLAB_POLY_OF_8=2" CARGO_TARGET_DIR="$tmp/target" \
    cargo test --release -p stage20-fp8 --test gpu --no-run --message-format=json |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "gpu":
        print(m["executable"])')
xz -T0 -6 -c "$exe" > "$out/p2/tests/stage20-fp8-gpu.xz"
for d in base p1 p2 p3; do cp "$root/scripts/bundle/unpack.sh" "$out/$d/"; done
cp "$root/scripts/bundle/sanitize.sh" "$out/p2/"
du -sh "$out"
