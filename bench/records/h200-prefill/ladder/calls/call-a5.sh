#!/usr/bin/env bash
# Call A5 (the same warm machine): FlashAttention-4's last part; the wheels joined and installed.
bash dist/fa4-part4/install-fa4.sh 2>&1 | tail -2
