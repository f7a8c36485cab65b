#!/usr/bin/env bash
# Builds the cluster experiment: stage 15's committed kernel beside this folder's prototype:
#   build.sh OUT_DIR   (needs nvcc on PATH or NVCC set)
# The prototype's patch and the base are stage 15's kernel as of ad2c0de (before its eight
# warps at D256); the pin below builds it so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/ and harness/ of ad2c0de (the kernel its patches target), bench/experiments/ of 5130997, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive ad2c0de stages harness | tar -x -C "$root"
git -C "$here/../../.." archive 5130997 bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-decode-cluster"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/stages/include" -I "$root/harness/kernels" -I "$root/bench/experiments/2026-11-26-decode-trace"
    -DFLASHLAB_HOST_WARPS=4 -DFLASHLAB_HOST_ROWS=16 -DFLASHLAB_HOST_BLOCK_KV=64 -DFLASHLAB_HOST_NSTAGES=3
    -DFLASHLAB_HOST_MAX_SPLITS=16 -DFLASHLAB_HOST_WIDE_COL_SPLIT=2)
${NVCC:-nvcc} "${flags[@]}" -I "$root/stages/15-fused-combine/kernels" -c "$here/wrap15.cu" -o "$out/wrap15.o"
# The prototype: stage 15's kernel with cluster-merge.patch applied.
patch -s -o "$out/flash_decode_cluster.cu" "$root/stages/15-fused-combine/kernels/flash_decode_fused.cu" "$here/cluster-merge.patch"
cp "$here/cluster.cuh" "$here/cluster_launch.h" "$out/"
${NVCC:-nvcc} "${flags[@]}" -I "$out" -c "$here/wrap16.cu" -o "$out/wrap16.o"
${NVCC:-nvcc} "${flags[@]}" -c "$here/cluster.cu" -o "$out/cluster.o"
${NVCC:-nvcc} "${flags[@]}" -o "$out/cluster" "$out/cluster.o" "$out/wrap15.o" "$out/wrap16.o"
