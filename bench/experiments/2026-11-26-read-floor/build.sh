#!/usr/bin/env bash
# Builds floor (read variants against the bench's read floor):
#   build.sh OUT_DIR   (needs nvcc on PATH or NVCC set)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
${NVCC:-nvcc} -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/harness/kernels" \
    -I "$root/bench/experiments/2026-11-26-decode-trace" -o "$out/floor" "$here/floor.cu"
