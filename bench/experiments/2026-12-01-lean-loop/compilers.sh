#!/usr/bin/env bash
# compilers.sh: stage 19's and stage 26's main loops (static cycles, `flashlab schedule`),
# compiled by the pinned CUDA 13.0 and by CUDA 13.4 (FlashAttention-4's compiler), sm_90a,
# as kernel-build compiles them. Run from the repository root of a checkout with
# stage 26 (it is in the tree since 2026-12-01), after `cargo build --release`. Installs
# CUDA 13.4's nvcc from PyPI into a temporary folder (no GPU needed).
set -euo pipefail
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$tmp/cuda134" \
    nvidia-cuda-nvcc==13.4.59 nvidia-cuda-crt==13.4.59 nvidia-nvvm==13.4.59 \
    nvidia-cuda-runtime==13.4.49 nvidia-cuda-cccl==13.3.5.0.6
host="-DFLASHLAB_HOST_WARPS=12 -DFLASHLAB_HOST_BLOCK_Q=128 -DFLASHLAB_HOST_WARPS_D64=16 -DFLASHLAB_HOST_BLOCK_Q_D64=192 -DFLASHLAB_HOST_BLOCK_KV=128 -DFLASHLAB_HOST_BLOCK_KV_D256=80 -DFLASHLAB_HOST_NSTAGES=2"
cuobjdump=.toolchain/cuda/nvidia/cu13/bin/cuobjdump
for nvcc in .toolchain/cuda/nvidia/cu13/bin/nvcc "$tmp/cuda134/nvidia/cu13/bin/nvcc"; do
    version=$("$nvcc" --version | grep -o 'release [0-9.]*')
    for stage in 19-lazy-rescale/kernels/lazy_rescale.cu:lazy 26-lean-loop/kernels/lean_loop.cu:lean; do
        "$nvcc" -fatbin -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -Ikernel-headers/include $host \
            -gencode=arch=compute_90a,code=sm_90a -o "$tmp/k.fatbin" "stages/${stage%%:*}"
        "$cuobjdump" -sass "$tmp/k.fatbin" > "$tmp/k.sass"
        printf '%-30s %-13s' "${stage%%/*}" "$version"
        for d in 64 128 256; do
            ./target/release/flashlab schedule "$tmp/k.sass" --kernel "${stage##*:}_bf16_d$d" | head -1 |
                sed -E 's/.*way around: [0-9]+ instructions, ([0-9]+) static.*/  d'$d' \1/' | tr -d '\n'
        done
        echo
    done
done
