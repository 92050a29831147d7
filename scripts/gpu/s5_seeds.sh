#!/usr/bin/env bash
# Session 5 (2026-11-29): the short tuning sweeps of s5_verify.sh again for fp8_gemm and softmax
# after seeding the wgmma and cluster templates with the bench winners. Results tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_BIN=$PWD/.devbin/ktune KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
tune() {  # name args...
  local name=$1; shift
  timeout 90 $D/ktune tune "$@" --budget 16 --db $OUT/tune.db --json > $OUT/tune-$name.json 2> $OUT/tune-$name.err; t tune-$name $?
}
tune softmax --kernel softmax --shape rows=256,cols=262144 --dtype bf16
tune fp8 --kernel fp8_gemm --shape m=4096,n=4096,k=4096 --dtype fp8e4m3 --layout nt
tune fp8-1024 --kernel fp8_gemm --shape m=1024,n=28672,k=4096 --dtype fp8e4m3 --layout nt
cat $OUT/t.txt; find $OUT -name '*.db*' -delete
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
