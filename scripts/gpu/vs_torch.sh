# The parts of scripts/gpu/verify.sh that tune a set of keys and then time each winner against what a
# PyTorch user would call instead, both replayed in CUDA graphs (--gemm-vs-torch, --attn-vs-torch,
# --ops-vs-torch), each followed by the sweep's counters of every key (bench/runtime/sweep_counters.py).
# Sourced by verify.sh, whose options, variables ($R, $BIN, $GEMM_*, $ATTN_*, $OPS_VS_TORCH) and
# helpers (run_part, have, say) it uses; not a command of its own.

# Nsight Compute (the profiled parts) and its metrics: time, DRAM traffic and throughput, occupancy,
# launch.
NCU_BIN=$(command -v ncu || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ncu")
NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread

# run_ncu PART MAX_S DIR NCU_ARGS... -- CMD...: CMD (with the runtime library) under Nsight Compute,
# clocks as they are, the metrics above as CSV in DIR/ncu.csv, its log in DIR/ncu.log; skipped with
# a line when ncu or the runtime library is missing.
run_ncu() {
  local part=$1 max=$2 dir=$3; shift 3
  local ncu_args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do ncu_args+=("$1"); shift; done
  shift
  if [ -x "$NCU_BIN" ] && [ -f "$BIN/lib/libktune_runtime.so" ]; then
    run_part "$part" "$max" "$dir/ncu.log" "$NCU_BIN" --clock-control none --csv --log-file "$dir/ncu.csv" \
      "${ncu_args[@]}" --metrics "$NCU_METRICS" env KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" "$@"
  else
    say "$part: skipped, needs ncu and .devbin/lib/libktune_runtime.so"
  fi
}

# --- shape sets' GEMMs tuned, then against torch in CUDA graphs ------------------------------------
# GEMM_VS_TORCH is SET[:M,...] or several joined by '+'; with one set the files are gemm-vs-torch.md
# and gemm-counters.md, with several gemm-vs-torch-SET.md and gemm-counters-SET.md.
if [ -n "$GEMM_VS_TORCH" ] && have "gemm-vs-torch" ktune; then
  IFS='+' read -r -a gemm_sets <<< "$GEMM_VS_TORCH"
  for gemm_set in "${gemm_sets[@]}"; do
    set_name=${gemm_set%%:*}
    suffix=""
    [ "${#gemm_sets[@]}" -gt 1 ] && suffix="-$set_name"
    dir=$R/gemm$suffix
    mkdir -p "$dir"
    shapes=configs/shapes/$set_name.toml
    m_list=""
    [[ $gemm_set == *:* ]] && m_list=${gemm_set#*:}
    if [ -n "$m_list" ]; then  # the same layers at the M asked for
      sed "s/^m = \[.*\]/m = [$m_list]/" "$shapes" > "$dir/shapes.toml"
      shapes=$dir/shapes.toml
    fi
    kernel=gemm dtype=bf16
    [ "$GEMM_DTYPE" = fp8 ] && kernel=fp8_gemm dtype=fp8e4m3
    run_part "gemm-sweep:$set_name" "$GEMM_SWEEP_S" "$dir/tune.log" "$BIN/ktune" tune --kernel "$kernel" --shapes "$shapes" \
      --dtype "$dtype" --layout nt --budget "$GEMM_BUDGET" --db "$dir/sweep.db" --json
    if [ -f "$BIN/lib/libktune_runtime.so" ] && python3 -c 'import torch' 2> /dev/null; then
      run_part "gemm-vs-torch:$set_name" 200 "$dir/vs_torch.log" env KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" \
        python3 bench/runtime/gemm_vs_torch.py --db "$dir/sweep.db" --shapes "$shapes" --dtype "$GEMM_DTYPE" \
        --out "$R/gemm-vs-torch$suffix.md" --csv "$dir/vs_torch.csv"
    else
      say "gemm-vs-torch: skipped, needs .devbin/lib/libktune_runtime.so and torch"
    fi
    # What bound each key: winner, best template and best cuBLASLt algorithm with the sweep's counters.
    run_part "gemm-counters:$set_name" 60 "$dir/counters.log" \
      python3 bench/runtime/sweep_counters.py --db "$dir/sweep.db" --out "$R/gemm-counters$suffix.md"
    # Every kernel of one call of each side under Nsight Compute (NVTX ranges "ktune" and "torch").
    run_ncu "gemm-ncu:$set_name" 120 "$dir" --nvtx --nvtx-include "ktune/" --nvtx-include "torch/" -- \
      python3 bench/runtime/gemm_vs_torch.py --db "$dir/sweep.db" --shapes "$shapes" --dtype "$GEMM_DTYPE" --profile
  done
fi

# --- a shape set's decode attention tuned, then against torch SDPA in CUDA graphs ------------------
if [ -n "$ATTN_VS_TORCH" ] && have "attn-vs-torch" ktune; then
  mkdir -p "$R/attn"
  shapes=configs/shapes/$ATTN_VS_TORCH.toml
  [ -f "$shapes" ] || shapes=$ATTN_VS_TORCH
  cp "$shapes" "$R/attn/shapes.toml"
  [ -n "$ATTN_BATCH" ] && sed -i "s/^batch = \[.*\]/batch = [$ATTN_BATCH]/" "$R/attn/shapes.toml"
  [ -n "$ATTN_SEQ" ] && sed -i "s/^seq = \[.*\]/seq = [$ATTN_SEQ]/" "$R/attn/shapes.toml"
  run_part "attn-sweep:$ATTN_VS_TORCH" "$ATTN_SWEEP_S" "$R/attn/tune.log" "$BIN/ktune" tune --kernel decode_attention \
    --shapes "$R/attn/shapes.toml" --dtype bf16 --budget "$ATTN_BUDGET" --db "$R/attn/sweep.db" --json
  if [ -f "$BIN/lib/libktune_runtime.so" ] && python3 -c 'import torch' 2> /dev/null; then
    run_part "attn-vs-torch:$ATTN_VS_TORCH" 200 "$R/attn/vs_torch.log" env KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" \
      python3 bench/runtime/attention_vs_torch.py --db "$R/attn/sweep.db" --shapes "$R/attn/shapes.toml" \
      --out "$R/attention-vs-torch.md" --csv "$R/attn/vs_torch.csv"
  else
    say "attn-vs-torch: skipped, needs .devbin/lib/libktune_runtime.so and torch"
  fi
  run_part "attn-counters" 60 "$R/attn/counters.log" \
    python3 bench/runtime/sweep_counters.py --db "$R/attn/sweep.db" --out "$R/attention-counters.md"
  # Both sides at batch 1 (the latency-bound corner) under Nsight Compute: ktune's kernels and SDPA's.
  run_ncu "attn-ncu" 150 "$R/attn" -k "regex:ktune_|flash|fmha|attention|sdpa" -- \
    python3 bench/runtime/attention_vs_torch.py --db "$R/attn/sweep.db" --shapes "$R/attn/shapes.toml" --batch 1 --profile
fi

# --- the memory-bound operators tuned, then against torch eager, torch.compile and Triton ----------
if [ "$OPS_VS_TORCH" = 1 ] && have "ops-vs-torch" ktune; then
  mkdir -p "$R/ops"
  run_part "ops-sweep" 240 "$R/ops/tune.log" bash -c "'$BIN/ktune' tune --kernel rmsnorm --shape rows=4096,hidden=4096 \
    --shape rows=16384,hidden=8192 --dtype bf16 --budget 24 --db '$R/ops/sweep.db' --json &&
    '$BIN/ktune' tune --kernel softmax --shape rows=4096,cols=32768 --dtype bf16 --budget 24 --db '$R/ops/sweep.db' --json &&
    '$BIN/ktune' tune --kernel swiglu --shape m=16384,i=14336 --dtype bf16 --budget 24 --db '$R/ops/sweep.db' --json"
  if [ -f "$BIN/lib/libktune_runtime.so" ] && python3 -c 'import torch, triton' 2> /dev/null; then
    run_part "ops-vs-torch" 240 "$R/ops/vs_torch.log" env KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" \
      python3 bench/runtime/ops_vs_torch.py --db "$R/ops/sweep.db" --out "$R/ops-vs-torch.md" --csv "$R/ops/vs_torch.csv"
  else
    say "ops-vs-torch: skipped, needs .devbin/lib/libktune_runtime.so, torch and triton"
  fi
  run_part "ops-counters" 60 "$R/ops/counters.log" \
    python3 bench/runtime/sweep_counters.py --db "$R/ops/sweep.db" --out "$R/ops-counters.md"
  # What bound each side: DRAM bytes and throughput, warps active, of one call of ktune's winner, the
  # compiled function's and the Triton kernel's at every size (Nsight Compute, caches flushed).
  run_ncu "ops-ncu" 180 "$R/ops" -k "regex:ktune_|triton|_rmsnorm_row|_softmax_row|_swiglu_block" -- \
    python3 bench/runtime/ops_vs_torch.py --db "$R/ops/sweep.db" --profile
  # The copy ceiling in the same call (every variant of the copy kernel, docs/perf/measurement.md).
  run_part "ceilings" 90 "$R/ops/ceilings.log" bash -c "'$BIN/ktune' devices --calibrate --db '$R/ops/sweep.db' --json > '$R/ops/ceilings.json'"
fi

# --- the keys a bench names tuned, then the bench against torch on that database ------------------
# keys_vs_torch NAME SCRIPT BUDGET SWEEP_S: `SCRIPT --print-keys` tuned at BUDGET a key into
# $R/NAME/sweep.db, then SCRIPT on it: $R/NAME-vs-torch.md (and NAME/vs_torch.csv).
keys_vs_torch() {
  local name=$1 script=$2 budget=$3 sweep_s=$4 d=$R/$1
  mkdir -p "$d"
  python3 "$script" --print-keys > "$d/keys.txt"
  run_part "$name-sweep" "$sweep_s" "$d/tune.log" "$BIN/ktune" tune --shapes "$d/keys.txt" --budget "$budget" \
    --db "$d/sweep.db" --json
  if [ -f "$BIN/lib/libktune_runtime.so" ] && python3 -c 'import torch' 2> /dev/null; then
    run_part "$name-vs-torch" 300 "$d/vs_torch.log" env KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" \
      python3 "$script" --db "$d/sweep.db" --out "$R/$name-vs-torch.md" --csv "$d/vs_torch.csv"
  else
    say "$name-vs-torch: skipped, needs .devbin/lib/libktune_runtime.so and torch"
  fi
}
# rope_append against torch eager and torch.compile; decode attention over a paged cache against
# the contiguous one and SDPA.
if [ "$ROPE_VS_TORCH" = 1 ] && have "rope-vs-torch" ktune; then
  keys_vs_torch rope bench/runtime/rope_append_vs_torch.py 16 240
fi
if [ "$PAGED_VS_TORCH" = 1 ] && have "paged-vs-torch" ktune; then
  keys_vs_torch paged bench/runtime/paged_attention_vs_torch.py 12 300
  # DRAM bytes and throughput of one call of each of ktune's sides a shape (caches flushed): what the
  # paged cache's layout and shuffle cost against the contiguous cache.
  run_ncu "paged-ncu" 180 "$R/paged" -k "regex:ktune_" -- \
    python3 bench/runtime/paged_attention_vs_torch.py --db "$R/paged/sweep.db" --profile
fi
