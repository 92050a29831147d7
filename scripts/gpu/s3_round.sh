#!/usr/bin/env bash
# One device call of the 2026-11-29 evening round (docs/perf/2026-11-29-session3-h200.md): the
# wgmma suite (both variants), the operator suite, the gemm family vs cuBLASLt at M >= 128 (mma,
# wgmma, wgmma_ws), and the operator benches of rmsnorm_rope and rmsnorm at large sizes. Binaries
# packed to .devbin; logs under $OUT, tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_BIN=$PWD/.devbin/ktune KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/smi.txt 2>&1
for x in ${SUITES:-ktune_wgmma_gpu_tests ktune_ops_gpu_tests}; do timeout ${SUITE_TIMEOUT:-240} $D/$x > $OUT/$x.log 2>&1; t $x $?; done
timeout ${GEMM_TIMEOUT:-200} $D/ktune_gemm_bench --m ${GEMM_M:-128,512,2048,4096} --layers q_proj,k_proj,gate_up_proj,down_proj --verbose --csv $OUT/gemm.csv > $OUT/gemm.txt 2> $OUT/gemm.err; t gemm $?
[ -n "${SKIP_OPS:-}" ] || for f in clean dirty; do timeout 150 $D/ktune_ops_bench --filter rmsnorm_rope --filter hidden=8192 --filter hidden=4096 --wide --flush $f > $OUT/ops-$f.txt 2>&1; t ops-$f $?; done
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
