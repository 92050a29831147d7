#!/usr/bin/env bash
# The closing device call of 2026-11-29, session 3 (docs/perf/2026-11-29-session3-h200.md): every
# gpu suite and both examples (run_on_device.sh), the gemm family vs cuBLASLt at M = 1..4096, the
# quick tuning preset with its report, and the operator benches at their large sizes. Binaries
# packed to .devbin; everything under $OUT is tarred into results.tgz (the device returns <= 8 files).
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_BIN=$PWD/.devbin/ktune KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
mkdir -p $OUT/suites
OUT=$OUT/suites GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-150} bash scripts/gpu/run_on_device.sh > $OUT/suites.txt 2>&1; t suites $?
timeout 200 $D/ktune_gemm_bench --m 1,16,128,512,2048,4096 --layers q_proj,k_proj,gate_up_proj,down_proj --verbose --csv $OUT/gemm.csv > $OUT/gemm.txt 2> $OUT/gemm.err; t gemm $?
timeout 90 $D/ktune tune --preset quick --db $OUT/quick.db --json > $OUT/quick.json 2> $OUT/quick.err; t quick $?
$D/ktune report --db $OUT/quick.db --format md --out $OUT/quick.md > $OUT/report.err 2>&1; t report_md $?
for f in clean dirty; do
  timeout 120 $D/ktune_ops_bench --wide --flush $f --filter hidden=8192 --filter rows=4096,hidden=4096 --filter rmsnorm_rope \
    --filter cols=32768 --filter cols=262144 --filter m=16384 > $OUT/ops-$f.txt 2>&1; t ops-$f $?
done
cat $OUT/t.txt; find $OUT -name '*.db*' -delete
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
