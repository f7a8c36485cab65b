#!/usr/bin/env bash
# Builds the trace instrument from the committed stage 15 kernel and trace.patch:
#   build.sh OUT_DIR   (run from anywhere; needs nvcc on PATH or NVCC set)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/, harness/ and bench/experiments/ as they were at a8a7371, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive a8a7371 stages harness bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-decode-trace"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
patch -s -o "$out/flash_decode_fused_traced.cu" "$root/stages/15-fused-combine/kernels/flash_decode_fused.cu" "$here/${PATCH:-trace.patch}"
cp "$here/trace.cu" "$here/flushed_timer.h" "$here/decode_problem.h" "$here/ck.h" "$out/"
# TRACE_INCLUDE: another copy of stages/include (../2026-11-26-read-floor/build-hint.sh's),
# TRACE_NAME: the binary's name.
${NVCC:-nvcc} -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "${TRACE_INCLUDE:-$root/stages/include}" -I "$root/harness/kernels" -I "$out" \
    -o "$out/${TRACE_NAME:-trace}" "$out/trace.cu"
