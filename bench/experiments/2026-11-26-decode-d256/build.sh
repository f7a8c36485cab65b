#!/usr/bin/env bash
# Builds colsplit (stage 15 at D256 against colsplit.patch's variant):
#   build.sh OUT_DIR   (needs nvcc on PATH or NVCC set)
# The patch and the base are stage 15's kernel as of ad2c0de, before its eight warps at
# D256 went into the stages; the pin below builds it so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/ and harness/ of ad2c0de (the kernel its patches target), bench/experiments/ of 5130997, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive ad2c0de stages harness | tar -x -C "$root"
git -C "$here/../../.." archive 5130997 bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-decode-d256"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
patch -s -o "$out/flash_decode_colsplit.cu" "$root/stages/15-fused-combine/kernels/flash_decode_fused.cu" "$here/colsplit.patch"
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/stages/include" -I "$root/harness/kernels"
    -I "$root/bench/experiments/2026-11-26-decode-trace"
    -DFLASHLAB_HOST_WARPS=4 -DFLASHLAB_HOST_ROWS=16 -DFLASHLAB_HOST_BLOCK_KV=64 -DFLASHLAB_HOST_NSTAGES=3)
${NVCC:-nvcc} "${flags[@]}" -I "$root/stages/15-fused-combine/kernels" -c "$here/wrap_base.cu" -o "$out/wrap_base.o"
${NVCC:-nvcc} "${flags[@]}" -I "$out" -Xptxas -v -c "$here/wrap_colsplit.cu" -o "$out/wrap_colsplit.o" 2>&1 | grep -A2 "col_bf16_d256" | grep -E "registers|spill" || true
${NVCC:-nvcc} "${flags[@]}" -c "$here/colsplit.cu" -o "$out/colsplit.o"
${NVCC:-nvcc} "${flags[@]}" -o "$out/colsplit" "$out/colsplit.o" "$out/wrap_base.o" "$out/wrap_colsplit.o"
