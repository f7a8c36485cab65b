#!/usr/bin/env bash
# Call G1 (one warm machine for calls G1-G5): FlashAttention-4's part 1 stashed.
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
