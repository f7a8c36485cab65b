#!/usr/bin/env bash
# build.sh: what call-b1.sh carries, built on a machine without a GPU (the pinned CUDA 13.0 in
# .toolchain, `just cuda`), from a worktree of 32f0bc9 with fp8-wide-keys.patch.txt applied:
# stage 20 with the key tile from FLASHLAB_EXP_FP8_BLOCK_KV and, with
# -DFLASHLAB_EXP_FP8_SEQUENTIAL=1, every head dim on d256's loop (no overlap inside the
# warpgroup). Into dist/fw/, each with its stage 20 GPU test binary (4.8 MiB a build).
set -euo pipefail
root=$(pwd)
export PATH=$root/.toolchain/cuda/nvidia/cu13/bin:$PATH
wt=$(mktemp -d)/wt; git worktree add -q --detach "$wt" 32f0bc9
trap 'git worktree remove --force "$wt"' EXIT
ln -s "$root/.toolchain" "$wt/.toolchain"
(cd "$wt" && git apply "$root/bench/experiments/2026-12-02-fp8-wide-keys/fp8-wide-keys.patch.txt")
out=$root/dist/fw; mkdir -p $out
build() { # name block_kv sequential
  local name=$1 kv=$2 seq=$3
  mkdir -p $out/$name/tests
  (cd "$wt" && FLASHLAB_EXP_FP8_BLOCK_KV=$kv FLASHLAB_NVCC_FLAGS="-DFLASHLAB_EXP_FP8_SEQUENTIAL=$seq" CARGO_TARGET_DIR="$wt"/../target cargo build --release --bin flashlab 2>&1 | tail -1)
  xz -T0 -6 -c "$wt"/../target/release/flashlab > $out/$name/flashlab.xz
  "$wt"/../target/release/flashlab resources 20 2>&1 | grep -E "fp8_(timeline_)?bf16_d(64|128) " > $out/$name/resources.txt
  exe=$(cd "$wt" && FLASHLAB_EXP_FP8_BLOCK_KV=$kv FLASHLAB_NVCC_FLAGS="-DFLASHLAB_EXP_FP8_SEQUENTIAL=$seq" CARGO_TARGET_DIR="$wt"/../target cargo test --release -p stage20-fp8 --test gpu --no-run --message-format=json 2>/dev/null | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "gpu":
        print(m["executable"])')
  xz -T0 -6 -c "$exe" > $out/$name/tests/stage20-fp8-gpu.xz
  cp $root/scripts/bundle/unpack.sh $root/scripts/bundle/sanitize.sh $out/$name/
  echo "$name done"; cat $out/$name/resources.txt
}
build s192 192 1
build s256 256 1
build s128 128 1
build o192 192 0
build o160 160 0
build o256 256 0
mkdir -p $out/base; (cd "$wt" && git stash -q && CARGO_TARGET_DIR="$wt"/../target cargo build --release --bin flashlab 2>&1 | tail -1 && git stash pop -q)
xz -T0 -6 -c "$wt"/../target/release/flashlab > $out/base/flashlab.xz; cp $root/scripts/bundle/unpack.sh $out/base/

du -sh $out
