#!/usr/bin/env bash
# Session 9, call 5: every bundled test (GPU tests of stages 1-11, the probes) on the merged tree, and resources.
cd "$(dirname "$0")"
mkdir -p $OUT/logs; L=$OUT/logs
timeout 540 ./run-tests.sh > $L/tests.log 2>&1; echo "rc $?" >> $L/tests.log
./flashlab resources > $L/resources.txt 2>&1
timeout 30 ./flashlab stage 11 --seqlen 8192 > $L/st11.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
