#!/usr/bin/env bash
# One device call of the 2026-11-29 afternoon measurements (docs/perf/2026-11-29-session2-h200.md):
# the gpu suites fixed that morning, the gemm family vs cuBLASLt, tune_bench.sh, the quick preset with
# its report, and the cache and runtime benchmarks. Binaries packed to .devbin; logs under $OUT.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_BIN=$PWD/.devbin/ktune KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
[ -n "${SKIP_TESTS:-}" ] || for x in ktune_measure_gpu_tests ktune_bench_gpu_tests ktune_loop_gpu_tests; do timeout 120 $D/$x --gtest_output=json:$OUT/$x.json > $OUT/$x.log 2>&1; t $x $?; done
timeout 100 $D/ktune_gemm_bench --m 1,16,128,512,2048,4096 --layers q_proj,k_proj,gate_up_proj,down_proj --verbose --csv $OUT/gemm.csv > $OUT/gemm.txt 2> $OUT/gemm.err; t gemm $?
timeout 200 env OUT=$OUT/tb bash scripts/gpu/tune_bench.sh $D/ktune > $OUT/tune_bench.out 2>&1; t tune_bench $?
timeout 90 $D/ktune tune --preset quick --db $OUT/quick.db --json > $OUT/quick.json 2> $OUT/quick.err; t quick $?
$D/ktune report --db $OUT/quick.db --format md --out $OUT/quick.md > $OUT/report.err 2>&1; t report_md $?
$D/ktune report --db $OUT/quick.db --format html --out $OUT/quick.html >> $OUT/report.err 2>&1; t report_html $?
$D/ktune cache export --db $OUT/quick.db --out $OUT/quick-export.json >> $OUT/report.err 2>&1; t export $?
timeout 60 $D/ktune_bench_cache --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $OUT/bench_cache.txt 2>&1; t cache $?
timeout 40 $D/ktune_bench_runtime > $OUT/bench_runtime.txt 2>&1; t runtime $?
cat $OUT/t.txt; find $OUT -name '*.db*' -delete  # databases hold cubins: too large to bring back
cd $OUT && tar czf /tmp/results.tgz * && ls -l /tmp/results.tgz
if [ "$(stat -c %s /tmp/results.tgz)" -gt 15000000 ]; then rm -f quick-export.json quick.html; tar czf /tmp/results.tgz *; fi
rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
