#!/usr/bin/env bash
# Call S4 (the same warm machine): FlashAttention-4's third part stashed.
bash dist/fa4-part3/install-fa4.sh 2>&1 | tail -1
