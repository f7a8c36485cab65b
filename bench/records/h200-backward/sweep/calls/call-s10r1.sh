#!/usr/bin/env bash
# Session 10, call R1 (one warm machine for calls R1-R7): FlashAttention-4's part 1 stashed.
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
