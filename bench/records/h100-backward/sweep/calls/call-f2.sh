#!/usr/bin/env bash
# Call F2 (one warm machine for calls F1-F5): FlashAttention-4's part 2 stashed.
bash dist/fa4-part2/install-fa4.sh 2>&1 | tail -1
