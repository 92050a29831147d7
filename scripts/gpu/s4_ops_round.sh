#!/usr/bin/env bash
# Session 4 (2026-11-29), an operator experiment round: the ops gpu suite, then the operator benches
# at the large sizes (--wide, clean and dirty flush). Everything under $OUT is tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
timeout 150 $D/ktune_ops_gpu_tests --gtest_output=json:$OUT/ops-gpu.json > $OUT/ops-gpu.txt 2>&1; t ops-gpu $?
for f in clean dirty; do
  # ROUND_FILTERS (e.g. "--filter rmsnorm_rope") replaces the default list of sizes.
  timeout 150 $D/ktune_ops_bench --wide --verbose --flush $f ${ROUND_FILTERS:---filter hidden=8192 --filter rows=4096,hidden=4096 \
    --filter rmsnorm_rope --filter cols=32768 --filter cols=262144 --filter m=16384} > $OUT/ops-$f.txt 2>&1; t ops-$f $?
done
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
