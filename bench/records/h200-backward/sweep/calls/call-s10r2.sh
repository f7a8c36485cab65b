#!/usr/bin/env bash
# Session 10, call R2 (one warm machine for calls R1-R7): FlashAttention-4's part 2 stashed.
bash dist/fa4-part2/install-fa4.sh 2>&1 | tail -1
