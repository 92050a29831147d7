#!/usr/bin/env bash
# Session 5 (2026-11-29): softmax cluster vs split at 64, 256 and 1024 rows of 262144 bf16 columns
# (is the cluster variant limited by its waves or by each block?). Results tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
for rows in 64 256 1024; do
  for c in cluster:256:8 cluster:128:8 cluster:512:8 split:256:8 split:512:4; do
    IFS=: read kind th n <<< "$c"
    if [ $kind = cluster ]; then cfg="{\"template\":\"cluster\",\"params\":{\"THREADS\":$th,\"CLUSTER\":$n}}"
    else cfg="{\"template\":\"rowwise\",\"params\":{\"THREADS\":$th,\"ROWS\":1,\"VEC\":8,\"ONLINE\":1,\"SPLIT\":$n}}"; fi
    timeout 60 $D/ktune bench --kernel softmax --shape rows=$rows,cols=262144 --dtype bf16 --config "$cfg" --json > $OUT/time-$rows-$kind-$th-$n.json 2>> $OUT/err.txt; t $rows-$kind-$th-$n $?
  done
done
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
