#!/usr/bin/env bash
# Builds the trace instrument (../2026-11-26-decode-trace) with every cp.async of the
# flashlab headers given an L2 prefetch-size hint: build-hint.sh OUT_DIR 128|256
# (writes OUT_DIR/trace-l2-<hint>). Session 18.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${1:?usage: build-hint.sh OUT_DIR 128|256}"; hint="${2:?}"
tmp="$(mktemp -d)"
cp -r "$root/stages/include/flashlab" "$tmp/"
sed -i "s/cp.async.cg.shared.global \[/cp.async.cg.shared.global.L2::${hint}B [/" "$tmp/flashlab/mma.cuh"
grep -c "L2::${hint}B" "$tmp/flashlab/mma.cuh" >&2
trace="$root/bench/experiments/2026-11-26-decode-trace"
mkdir -p "$tmp/b"
patch -s -o "$tmp/b/flash_decode_fused_traced.cu" "$root/stages/15-fused-combine/kernels/flash_decode_fused.cu" "$trace/trace.patch"
cp "$trace/trace.cu" "$trace/flushed_timer.h" "$trace/decode_problem.h" "$trace/ck.h" "$tmp/b/"
${NVCC:-nvcc} -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$tmp" -I "$root/harness/kernels" -I "$tmp/b" \
    -o "$out/trace-l2-$hint" "$tmp/b/trace.cu"
rm -rf "$tmp"
