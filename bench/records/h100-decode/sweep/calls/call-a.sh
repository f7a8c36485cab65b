#!/usr/bin/env bash
# Session 18, call A: FA4's first part stashed; flashlab info with the slab read.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/../fa4-part1/install-fa4.sh" 2>&1 | tail -1
cd "$here" && xz -d -k -f flashlab.xz && chmod +x flashlab
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "build: $(cat COMMIT)"
timeout 120 ./flashlab info 2>&1 | tail -30
