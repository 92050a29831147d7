#!/usr/bin/env bash
# Session 5 (2026-11-29), after the review refactors (the shared TMA wgmma pipeline, the wgmma
# operand macros, block_work's k tile, the spec-rule helpers, the runtime's single alignment
# check): every gpu suite, the gemm bench for the bf16 TMA GEMM at M 2048 and 4096 (against the
# session 3 figures), and the fp8 bench at M 1024 and 4096. Results tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_BIN=$PWD/.devbin/ktune KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
mkdir -p $OUT/suites
OUT=$OUT/suites GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-150} bash scripts/gpu/run_on_device.sh > $OUT/suites.txt 2>&1; t suites $?
timeout 120 $D/ktune_gemm_bench --m 2048 4096 --layers q_proj gate_up_proj down_proj --csv $OUT/gemm.csv > $OUT/gemm.txt 2> $OUT/gemm.err; t gemm $?
timeout 90 $D/ktune_fp8_bench --m 1024 4096 --csv $OUT/fp8.csv > $OUT/fp8-bench.txt 2>&1; t fp8-bench $?
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
