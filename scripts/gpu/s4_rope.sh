#!/usr/bin/env bash
# Session 4 (2026-11-29), device calls on rmsnorm_rope (STEPS / STAGES experiments, then the
# 32-bit index math and the L1 prefetch of the table row). The ops gpu suite, the rope bench (--wide, clean and dirty flush) and CUPTI counters at two configs.
# Everything under $OUT is tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
D=.devbin; S=$(date +%s); t() { echo "$1 rc=$2 at $(( $(date +%s)-S ))s" >> $OUT/t.txt; }
timeout 150 $D/ktune_ops_gpu_tests --gtest_output=json:$OUT/ops-gpu.json > $OUT/ops-gpu.txt 2>&1; t ops-gpu $?
for f in clean dirty; do
  timeout 150 $D/ktune_ops_bench --wide --flush $f --verbose --filter rmsnorm_rope > $OUT/rope-$f.txt 2>&1; t rope-$f $?
done
BASE="dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum"
STALL="smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__warps_launched.sum,smsp__inst_executed.sum"
for c in "8 8 8 2" "8 8 8 1"; do
  set -- $c; n=t$1.h$2.v$3.i$4
  for set in BASE STALL; do
    timeout 60 $D/ktune bench --kernel rmsnorm_rope --shape tokens=16384,heads_q=32,heads_kv=8,head_dim=128 --dtype bf16 --layout neox \
      --config "{\"template\":\"headwise\",\"params\":{\"THREADS\":$1,\"HEADS\":$2,\"VEC\":$3,\"ITEMS\":$4}}" \
      --counters --metrics "${!set}" --json > $OUT/ctr-$n-$set.json 2> $OUT/ctr-$n-$set.err; t ctr-$n-$set $?
  done
done
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
