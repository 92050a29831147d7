#!/usr/bin/env bash
# Session 5 (2026-11-29), after the rmsnorm_rope bulk variant: the runtime / tuning-loop, bench and
# ops gpu suites again, both examples, and short tuning sweeps (budget 16, seeds first) through the
# real worker for each new sm_90 template's kernel: rmsnorm, rmsnorm_rope, softmax (long rows) and
# fp8_gemm. Results tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_BIN=$PWD/.devbin/ktune KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
for s in ktune_loop_gpu_tests ktune_bench_gpu_tests ktune_ops_gpu_tests; do
  timeout 150 $D/$s > $OUT/$s.txt 2>&1; t $s $?
done
(timeout 60 $D/ktune_gemm_example --db $OUT/g.db; echo "gemm_example rc=$?"; timeout 60 $D/ktune_ops_example --db $OUT/o.db; echo "ops_example rc=$?") > $OUT/examples.txt 2>&1; t examples $?
tune() {  # name args...
  local name=$1; shift
  timeout 90 $D/ktune tune "$@" --budget 16 --db $OUT/tune.db --json > $OUT/tune-$name.json 2> $OUT/tune-$name.err; t tune-$name $?
}
tune rmsnorm --kernel rmsnorm --shape rows=16384,hidden=8192 --dtype bf16
tune rope --kernel rmsnorm_rope --shape tokens=16384,heads_q=32,heads_kv=8,head_dim=128 --dtype bf16 --layout neox
tune softmax --kernel softmax --shape rows=256,cols=262144 --dtype bf16
tune fp8 --kernel fp8_gemm --shape m=4096,n=4096,k=4096 --dtype fp8e4m3 --layout nt
cat $OUT/t.txt; find $OUT -name '*.db*' -delete
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
