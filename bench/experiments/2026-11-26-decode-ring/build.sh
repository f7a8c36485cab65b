#!/usr/bin/env bash
# Builds ring3, ring4 and ring6: stage 15's committed kernel with a cp.async ring of 3, 4
# or 6 slots (the only change), each with ring.cu as its driver.
#   build.sh OUT_DIR   (needs nvcc on PATH or NVCC set)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/, harness/ and bench/experiments/ as they were at e3abb01, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive e3abb01 stages harness bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-decode-ring"
out="${1:?usage: build.sh OUT_DIR}"
for n in 3 4 6; do
    mkdir -p "$out/nst$n"
    sed "s/^constexpr int NSTAGES = 3; /constexpr int NSTAGES = $n; /" \
        "$root/stages/15-fused-combine/kernels/flash_decode_fused.cu" >"$out/nst$n/flash_decode_ring.cu"
    grep -q "^constexpr int NSTAGES = $n; " "$out/nst$n/flash_decode_ring.cu"
    ${NVCC:-nvcc} -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/stages/include" \
        -I "$root/harness/kernels" -I "$root/bench/experiments/2026-11-26-decode-trace" -I "$out/nst$n" \
        -DFLASHLAB_HOST_NSTAGES=$n -o "$out/ring$n" "$here/ring.cu"
done
