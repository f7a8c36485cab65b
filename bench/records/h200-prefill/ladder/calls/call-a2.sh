#!/usr/bin/env bash
# Call A2 (the same warm machine): FlashAttention-4's part 1 stashed (one 29 MiB part a call:
# the working tree takes 35 of the 64 MiB a call carries).
bash dist/fa4-part1/install-fa4.sh 2>&1 | tail -1
