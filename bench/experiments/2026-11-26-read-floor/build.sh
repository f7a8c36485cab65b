#!/usr/bin/env bash
# Builds floor (read variants against the bench's read floor):
#   build.sh OUT_DIR   (needs nvcc on PATH or NVCC set)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/, harness/ and bench/experiments/ as they were at a8a7371, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive a8a7371 stages harness bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-read-floor"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
${NVCC:-nvcc} -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/harness/kernels" \
    -I "$root/bench/experiments/2026-11-26-decode-trace" -o "$out/floor" "$here/floor.cu"
