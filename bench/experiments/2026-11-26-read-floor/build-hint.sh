#!/usr/bin/env bash
# Builds the trace instrument (../2026-11-26-decode-trace) with every cp.async of the
# flashlab headers given an L2 prefetch-size hint: build-hint.sh OUT_DIR 128|256
# (writes OUT_DIR/trace-l2-<hint>). Session 18.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Pinned: builds from the tree it ran at, never the live one (bench/experiments/README.md):
# stages/, harness/ and bench/experiments/ as they were at a8a7371, unpacked from git into a temporary folder.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
git -C "$here/../../.." archive a8a7371 stages harness bench/experiments | tar -x -C "$root"
here="$root/bench/experiments/2026-11-26-read-floor"
out="${1:?usage: build-hint.sh OUT_DIR 128|256}"; hint="${2:?}"
tmp="$(mktemp -d)"
cp -r "$root/stages/include/flashlab" "$tmp/"
sed -i "s/cp.async.cg.shared.global \[/cp.async.cg.shared.global.L2::${hint}B [/" "$tmp/flashlab/mma.cuh"
grep -c "L2::${hint}B" "$tmp/flashlab/mma.cuh" >&2
TRACE_INCLUDE="$tmp" TRACE_NAME="trace-l2-$hint" "$here/../2026-11-26-decode-trace/build.sh" "$out"
rm -rf "$tmp"
