#!/usr/bin/env bash
# build.sh OUT_DIR: the two recorded experiments of 2026-11-27 that reordered stage 16/19's
# loop, compiled again here from their sources as they ran (against the headers of the
# commit each ran at, `git archive`), and each main loop's static cycles written as
# `flashlab schedule --markdown` prints them. nvcc and cuobjdump: $NVCC / $CUOBJDUMP, or the
# pinned CUDA 13.0 of `just cuda` in .toolchain/. Run from the repository root, after
# `cargo build --release`.
set -euo pipefail
out="$1"; mkdir -p "$out"
bin=.toolchain/cuda/nvidia/cu13/bin
nvcc="${NVCC:-$bin/nvcc}"; cuobjdump="${CUOBJDUMP:-$bin/cuobjdump}"
host="-DFLASHLAB_HOST_WARPS=12 -DFLASHLAB_HOST_BLOCK_Q=128 -DFLASHLAB_HOST_WARPS_D64=16 -DFLASHLAB_HOST_BLOCK_Q_D64=192 -DFLASHLAB_HOST_BLOCK_KV=128 -DFLASHLAB_HOST_BLOCK_KV_D256=80 -DFLASHLAB_HOST_NSTAGES=2"
build() { # name commit source (a file, or COMMIT:PATH) kernel-prefix head-dims
    local dir; dir=$(mktemp -d)
    # The headers moved from stages/include to kernel-headers/include on 2026-11-27.
    local inc=kernel-headers/include
    git cat-file -e "$2:$inc" 2>/dev/null || inc=stages/include
    git archive "$2" "$inc" | tar -x -C "$dir"
    case "$3" in *:*) git show "$3" > "$dir/k.cu" ;; *) cp "$3" "$dir/k.cu" ;; esac
    "$nvcc" -fatbin -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -I"$dir/$inc" $host \
        -gencode=arch=compute_90a,code=sm_90a -o "$dir/k.fatbin" "$dir/k.cu"
    "$cuobjdump" -sass "$dir/k.fatbin" > "$dir/k.sass"
    for d in $5; do
        ./target/release/flashlab schedule "$dir/k.sass" --kernel "$4_bf16_d$d" --markdown > "$out/$1-d$d.md"
    done
    rm -rf "$dir"
}
e=bench/experiments
# Each beside the kernel it was measured against, at its commit.
build stage16 f63c60d f63c60d:stages/16-overlap/kernels/overlap.cu overlap "64 128"
build stage19 6db7bad 6db7bad:stages/19-lazy-rescale/kernels/lazy_rescale.cu lazy "64 128 256"
# The descriptors built once and stepped (stage 16's kernel, 2026-11-27-descriptors-and-waits, "va").
build stepped-descriptors f63c60d $e/2026-11-27-descriptors-and-waits/overlap-stepped-descriptors.cu.txt overlap "64 128"
# A quarter of the exponentials before the wait for P V (stage 19's, 2026-11-27-exp-around-the-wait, "20").
build exponentials-around-the-wait 6db7bad $e/2026-11-27-exp-around-the-wait/split-quarter-lazy.cu.txt var20 "64 128 256"
