#!/usr/bin/env bash
# Builds addr3 (stage 15's kernel of 99db914 with addresses.patch: a tile's row offsets from
# one row and the stride) and lazy3 (that plus lazy-rescale.patch, the O rescale skipped
# when no row's max moved), each with ../2026-11-26-decode-ring/ring.cu as the driver.
#   build.sh OUT_DIR   (needs nvcc on PATH or NVCC set)
# The patches target the kernel of 99db914, before the addresses went into the stages:
# the pin below builds it so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/ and harness/ of 99db914 (the kernel its patches target), bench/experiments/ of ee213a9, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive 99db914 stages harness | tar -x -C "$root"
git -C "$here/../../.." archive ee213a9 bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-decode-addresses"
out="${1:?usage: build.sh OUT_DIR}"
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/stages/include" -I "$root/harness/kernels"
    -I "$root/bench/experiments/2026-11-26-decode-trace" -DFLASHLAB_HOST_NSTAGES=3)
mkdir -p "$out/addr" "$out/lazy"
patch -s -o "$out/addr/flash_decode_ring.cu" "$root/stages/15-fused-combine/kernels/flash_decode_fused.cu" "$here/addresses.patch"
patch -s -o "$out/lazy/flash_decode_ring.cu" "$out/addr/flash_decode_ring.cu" "$here/lazy-rescale.patch"
${NVCC:-nvcc} "${flags[@]}" -I "$out/addr" -o "$out/addr3" "$here/../2026-11-26-decode-ring/ring.cu"
${NVCC:-nvcc} "${flags[@]}" -I "$out/lazy" -DLAZY_RESCALE -o "$out/lazy3" "$here/../2026-11-26-decode-ring/ring.cu"
