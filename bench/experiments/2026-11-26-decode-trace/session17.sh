#!/usr/bin/env bash
# Session 17's four calls, each on a fresh H100 with trace built by build.sh (the kernel of
# c915ba8, unchanged since 7ef4ebd) next to this script:
#   session17.sh warm      call 1: cold, then the code warmed by a small launch after each flush
#   session17.sh preread   call 2: the same, with a 64 KiB (then 4 MiB) read before the first event in both
#   session17.sh timed     call 3: the trace of the last timed launch beside one launch traced alone
#   session17.sh carveout  call 4: the flush kernel's shared-memory carveout: default, 100, 0
#   session17.sh timed     call 5: as call 3, with the kernel-entry point (trace.patch since)
#   session17.sh prefetch  call 6: trace against trace-prefetch (PATCH=trace-prefetch.patch build.sh)
#   session17.sh nochain   call 12: trace against trace-nochain (PATCH=trace-nochain.patch build.sh)
#   session17.sh dump      call 11: every block's loop of 20 launches, three shapes, two
#                          processes each, to $OUT/session17-loops.csv
# Output: $OUT/session17-<mode>.txt (the committed session17-call*.txt).
set -u
cd "$(dirname "$0")"
mode="${1:?usage: session17.sh warm|preread|timed|carveout|prefetch|nochain|dump}"
shapes=("1 2048 16" "1 8192 16" "1 32768 16" "8 8192 2")
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
case "$mode" in
  warm) for round in 1 2; do for s in "${shapes[@]}"; do
          echo "== round $round"; timeout 90 ./trace $s warm; done; done ;;
  preread) for kib in 64 4096; do for round in 1 2; do for s in "${shapes[@]:0:3}"; do
          echo "== pre-read $kib KiB, round $round"; FLASHLAB_PRE_READ_KIB=$kib timeout 90 ./trace $s warm; done; done; done ;;
  timed) for round in 1 2; do for s in "${shapes[@]}"; do
          echo "== plain, round $round"; timeout 90 ./trace $s
          echo "== pre-read 64 KiB, round $round"; FLASHLAB_PRE_READ_KIB=64 timeout 90 ./trace $s; done; done ;;
  carveout) for round in 1 2; do for s in "${shapes[@]}"; do
          echo "== carveout default, round $round"; timeout 90 ./trace $s
          echo "== carveout 100, round $round"; FLASHLAB_FLUSH_CARVEOUT=100 timeout 90 ./trace $s
          echo "== carveout 0, round $round"; FLASHLAB_FLUSH_CARVEOUT=0 timeout 90 ./trace $s; done; done ;;
  prefetch|nochain) for round in 1 2 3; do for s in "${shapes[@]}"; do
          for b in trace trace-$mode; do echo "== $b, round $round"; timeout 90 ./$b $s; done; done; done ;;
  dump) echo "batch,keys,launch,block,sm,start_us,first_tile_us,loop_done_us" > "$OUT/session17-loops.csv"
        for round in 1 2; do for s in "1 32768 16" "1 8192 16" "8 8192 2"; do
          echo "== dump, round $round"; FLASHLAB_TRACE_DUMP="$OUT/session17-loops.csv" timeout 90 ./trace $s; done; done ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
} > "$OUT/session17-$mode.txt" 2>&1
