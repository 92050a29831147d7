#!/usr/bin/env bash
# CUPTI counters of rmsnorm_rope (16384 tokens, 32/8 heads, 128) and rmsnorm (16384x8192) at their
# bench winners, bf16 (2026-11-29, session 3): DRAM traffic, occupancy and issue stalls. JSON in
# $OUT, tarred into results.tgz.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
K=.devbin/ktune
BASE="dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum"
STALL="smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__warps_launched.sum,smsp__inst_executed.sum"
run() {  # name kernel shape layout config
  for set in BASE STALL; do
    timeout 60 $K bench --kernel $2 --shape $3 --dtype bf16 ${4:+--layout $4} --config "$5" --counters --metrics "${!set}" \
      --json > $OUT/$1-$set.json 2> $OUT/$1-$set.err
    echo "$1 $set rc=$?" >> $OUT/t.txt
  done
}
run rope rmsnorm_rope tokens=16384,heads_q=32,heads_kv=8,head_dim=128 neox '{"template":"headwise","params":{"THREADS":8,"HEADS":8,"VEC":8}}'
run rope_t4h32 rmsnorm_rope tokens=16384,heads_q=32,heads_kv=8,head_dim=128 neox '{"template":"headwise","params":{"THREADS":4,"HEADS":32,"VEC":8}}'
run rmsnorm rmsnorm rows=16384,hidden=8192 "" '{"template":"rowwise","params":{"THREADS":128,"ROWS":1,"VEC":8,"REG":1}}'
cat $OUT/t.txt
cd $OUT && tar czf /tmp/results.tgz * && rm -rf $OUT/* && mv /tmp/results.tgz $OUT/
