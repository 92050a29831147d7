#!/usr/bin/env bash
# CUPTI counters of wgmma pipelines (VARIANTS, default "wgmma"; session 3 also ran the since removed
# wgmma_ws and wgmma_pair) at 4096^3 bf16 nt (2026-11-29, session 3):
# where the L2, shared memory and the issue stalls stand. One JSON per (config, metric set) in $OUT.
set -u
export LD_LIBRARY_PATH=$PWD/.devbin/lib:$LD_LIBRARY_PATH KTUNE_CONFIGS_DIR=$PWD/configs KTUNE_NO_PROGRESS=1 KTUNE_SOURCE_DIR=$PWD
K=.devbin/ktune
BASE="sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,gpu__time_duration.sum"
STALL="smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio"
for v in ${VARIANTS:-wgmma}; do
  cfg="{\"template\":\"$v\",\"params\":{\"BLOCK_M\":128,\"BLOCK_N\":256,\"BLOCK_K\":64,\"STAGES\":4,\"SPLIT_K\":1,\"SWIZZLE\":8}}"
  for set in BASE STALL; do
    timeout 60 $K bench --kernel gemm --shape m=4096,n=4096,k=4096 --dtype bf16 --config "$cfg" --baseline cublas \
      --counters --metrics "${!set}" --json > $OUT/$v-$set.json 2> $OUT/$v-$set.err
    echo "$v $set rc=$?" >> $OUT/t.txt
  done
done
cat $OUT/t.txt
