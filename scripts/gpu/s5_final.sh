#!/usr/bin/env bash
# The closing device call of 2026-11-29, session 5 (docs/perf/2026-11-29-session5-h200.md): every
# gpu suite (run_on_device.sh), the operator benches at their large and latency sizes (--wide,
# clean and dirty flush), two more clean runs at 16384 rows / tokens, the fp8 bench against
# cuBLASLt, both examples, and the quick tuning preset. Binaries packed to .devbin; everything
# under $OUT is tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_BIN=$PWD/.devbin/ktune KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
mkdir -p $OUT/suites
OUT=$OUT/suites GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-150} bash scripts/gpu/run_on_device.sh > $OUT/suites.txt 2>&1; t suites $?
for f in clean dirty; do
  timeout 120 $D/ktune_ops_bench --wide --flush $f --filter hidden=8192 --filter rows=4096,hidden=4096 --filter tokens=16384 \
    --filter cols=32768 --filter cols=262144 --filter m=16384 --filter rows=1, --filter rows=128, > $OUT/ops-$f.txt 2>&1; t ops-$f $?
done
for i in 1 2; do
  timeout 60 $D/ktune_ops_bench --flush clean --filter tokens=16384 --filter rows=16384,hidden=8192 > $OUT/repeat$i.txt 2>&1; t repeat$i $?
done
timeout 120 $D/ktune_fp8_bench --m 1 16 128 1024 4096 --csv $OUT/fp8.csv > $OUT/fp8-bench.txt 2>&1; t fp8-bench $?
(timeout 60 $D/ktune_gemm_example --db $OUT/g.db; echo "gemm_example rc=$?"; timeout 60 $D/ktune_ops_example --db $OUT/o.db; echo "ops_example rc=$?") > $OUT/examples.txt 2>&1; t examples $?
timeout 100 $D/ktune tune --preset quick --db $OUT/quick.db --json > $OUT/quick.json 2> $OUT/quick.err; t quick $?
$D/ktune report --db $OUT/quick.db --format md --out $OUT/quick.md > $OUT/report.err 2>&1; t report_md $?
cat $OUT/t.txt; find $OUT -name '*.db*' -delete
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
