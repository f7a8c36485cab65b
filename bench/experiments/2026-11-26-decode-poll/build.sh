#!/usr/bin/env bash
# Builds poll: stage 15's committed kernel beside make-poll.py's trial (POLL_FLAGS: its flags).
#   [POLL_FLAGS=...] build.sh OUT_DIR   (needs nvcc on PATH or NVCC set, and python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/, harness/ and bench/experiments/ as they were at fe7dd8a, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive fe7dd8a stages harness bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-decode-poll"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
python3 "$here/make-poll.py" ${POLL_FLAGS:-} "$out"
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$root/stages/include" -I "$root/harness/kernels"
    -I "$root/bench/experiments/2026-11-26-decode-trace" -DFLASHLAB_HOST_WARPS=4 -DFLASHLAB_HOST_ROWS=16
    -DFLASHLAB_HOST_BLOCK_KV=64 -DFLASHLAB_HOST_NSTAGES=3 -DFLASHLAB_HOST_WIDE_COL_SPLIT=2)
${NVCC:-nvcc} "${flags[@]}" -I "$root/stages/15-fused-combine/kernels" -c "$here/wrap15.cu" -o "$out/wrap15.o"
trace=(); case " ${POLL_FLAGS:-} " in *" --trace "*) trace=(-DPOLL_TRACE_BUILD) ;; esac
${NVCC:-nvcc} "${flags[@]}" "${trace[@]}" -I "$out" -c "$here/wrap_poll.cu" -o "$out/wrap_poll.o"
${NVCC:-nvcc} "${flags[@]}" -c "$here/poll.cu" -o "$out/poll.o"
${NVCC:-nvcc} "${flags[@]}" -o "$out/poll" "$out/poll.o" "$out/wrap15.o" "$out/wrap_poll.o"
