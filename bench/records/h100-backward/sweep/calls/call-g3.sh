#!/usr/bin/env bash
# Call G3 (one warm machine for calls G1-G5): FlashAttention-4's part 3 stashed.
bash dist/fa4-part3/install-fa4.sh 2>&1 | tail -1
