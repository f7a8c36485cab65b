#!/usr/bin/env bash
# Call S3 (the same warm machine): FlashAttention-4's second part stashed.
bash dist/fa4-part2/install-fa4.sh 2>&1 | tail -1
