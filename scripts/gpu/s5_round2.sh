#!/usr/bin/env bash
# Session 5 (2026-11-29), round 2: the fp8 and wgmma gpu suites (the fp8 wgmma variant; the mbarrier
# header the bf16 TMA GEMM now includes), the fp8 bench against cuBLASLt (M 128, 1024, 4096), and
# the rmsnorm bulk sweep at 16384x8192 (clean). Everything under $OUT is tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
timeout 200 $D/ktune_fp8_gpu_tests > $OUT/fp8-gpu.txt 2>&1; t fp8-gpu $?
timeout 120 $D/ktune_wgmma_gpu_tests > $OUT/wgmma-gpu.txt 2>&1; t wgmma-gpu $?
timeout 150 $D/ktune_fp8_bench --m 128 1024 4096 --verbose --csv $OUT/fp8.csv > $OUT/fp8-bench.txt 2>&1; t fp8-bench $?
timeout 90 $D/ktune_ops_bench --wide --verbose --flush clean --filter hidden=8192 > $OUT/ops-clean.txt 2>&1; t ops-clean $?
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
