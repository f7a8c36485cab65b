#!/usr/bin/env bash
# Builds prefetch (stage 15 with prefetch.patch, the L2 asked for tiles ahead):
#   build.sh OUT_DIR   (needs nvcc on PATH or NVCC set)
# results.txt is of the kernel of 99db914; the patch applies to the later kernels too.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/, harness/ and bench/experiments/ as they were at f908227, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive f908227 stages harness bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-decode-prefetch"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
patch -s -o "$out/flash_decode_prefetch.cu" "$root/stages/15-fused-combine/kernels/flash_decode_fused.cu" "$here/prefetch.patch"
${NVCC:-nvcc} -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/stages/include" -I "$root/harness/kernels" \
    -I "$root/bench/experiments/2026-11-26-decode-trace" -I "$out" -Xptxas -v \
    -o "$out/prefetch" "$here/prefetch.cu" 2>&1 | grep -A2 "split_bf16_d128" | grep -E "registers|spill" || true
