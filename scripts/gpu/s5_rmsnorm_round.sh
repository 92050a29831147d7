#!/usr/bin/env bash
# Session 5 (2026-11-29), an rmsnorm experiment round: the ops gpu suite, then the rmsnorm benches
# (--wide --verbose, clean and dirty flush) at every rmsnorm size. Everything under $OUT is tarred
# into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
timeout 200 $D/ktune_ops_gpu_tests ${GPU_FILTER:-} --gtest_output=json:$OUT/ops-gpu.json > $OUT/ops-gpu.txt 2>&1; t ops-gpu $?
for f in clean dirty; do
  timeout 200 $D/ktune_ops_bench --wide --verbose --flush $f ${ROUND_FILTERS:---filter "rmsnorm "} > $OUT/ops-$f.txt 2>&1; t ops-$f $?
done
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
