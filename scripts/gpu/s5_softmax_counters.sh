#!/usr/bin/env bash
# Session 5 (2026-11-29): CUPTI counters of softmax 64x262144 bf16, the cluster variant against the
# split rowwise config (kernel time, DRAM bytes and throughput, warps active, stalls). Everything
# under $OUT is tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
BASE="dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__cycles_active.avg"
STALL="smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum"
run() {  # name config-json
  for set in BASE STALL; do
    timeout 60 $D/ktune bench --kernel softmax --shape rows=64,cols=262144 --dtype bf16 --config "$2" \
      --counters --metrics "${!set}" --json > $OUT/ctr-$1-$set.json 2> $OUT/ctr-$1-$set.err; t ctr-$1-$set $?
  done
  timeout 60 $D/ktune bench --kernel softmax --shape rows=64,cols=262144 --dtype bf16 --config "$2" --json > $OUT/time-$1.json 2> $OUT/time-$1.err; t time-$1 $?
}
run cluster-t256-c8 '{"template":"cluster","params":{"THREADS":256,"CLUSTER":8}}'
run split-t256-s8 '{"template":"rowwise","params":{"THREADS":256,"ROWS":1,"VEC":8,"ONLINE":1,"SPLIT":8}}'
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
