#!/usr/bin/env bash
# Call L1: FlashAttention-4's part 1 stashed (the machine keeps /tmp while warm).
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
