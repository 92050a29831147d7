# The parts of scripts/gpu/verify.sh that tune a set of keys and then time each winner against what a
# PyTorch user would call instead, both replayed in CUDA graphs (--gemm-vs-torch, --attn-vs-torch,
# --ops-vs-torch), each followed by the sweep's counters of every key (bench/runtime/sweep_counters.py).
# Sourced by verify.sh, whose options, variables ($R, $BIN, $GEMM_*, $ATTN_*, $OPS_VS_TORCH) and
# helpers (run_part, have, say) it uses; not a command of its own.

# --- a shape set's GEMMs tuned, then against torch in CUDA graphs -----------------------------------
if [ -n "$GEMM_VS_TORCH" ] && have "gemm-vs-torch" ktune; then
  mkdir -p "$R/gemm"
  set_name=${GEMM_VS_TORCH%%:*}
  shapes=configs/shapes/$set_name.toml
  m_list=""
  [[ $GEMM_VS_TORCH == *:* ]] && m_list=${GEMM_VS_TORCH#*:}
  if [ -n "$m_list" ]; then  # the same layers at the M asked for
    sed "s/^m = \[.*\]/m = [$m_list]/" "$shapes" > "$R/gemm/shapes.toml"
    shapes=$R/gemm/shapes.toml
  fi
  kernel=gemm dtype=bf16
  [ "$GEMM_DTYPE" = fp8 ] && kernel=fp8_gemm dtype=fp8e4m3
  run_part "gemm-sweep:$set_name" "$GEMM_SWEEP_S" "$R/gemm/tune.log" "$BIN/ktune" tune --kernel "$kernel" --shapes "$shapes" \
    --dtype "$dtype" --layout nt --budget "$GEMM_BUDGET" --db "$R/gemm/sweep.db" --json
  if [ -f "$BIN/lib/libktune_runtime.so" ] && python3 -c 'import torch' 2> /dev/null; then
    run_part "gemm-vs-torch:$set_name" 200 "$R/gemm/vs_torch.log" env KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" \
      python3 bench/runtime/gemm_vs_torch.py --db "$R/gemm/sweep.db" --shapes "$shapes" --dtype "$GEMM_DTYPE" \
      --out "$R/gemm-vs-torch.md" --csv "$R/gemm/vs_torch.csv"
  else
    say "gemm-vs-torch: skipped, needs .devbin/lib/libktune_runtime.so and torch"
  fi
  # What bound each key: winner, best template and best cuBLASLt algorithm with the sweep's counters.
  run_part "gemm-counters:$set_name" 60 "$R/gemm/counters.log" \
    python3 bench/runtime/sweep_counters.py --db "$R/gemm/sweep.db" --out "$R/gemm-counters.md"
fi

# --- a shape set's decode attention tuned, then against torch SDPA in CUDA graphs ------------------
if [ -n "$ATTN_VS_TORCH" ] && have "attn-vs-torch" ktune; then
  mkdir -p "$R/attn"
  shapes=configs/shapes/$ATTN_VS_TORCH.toml
  [ -f "$shapes" ] || shapes=$ATTN_VS_TORCH
  cp "$shapes" "$R/attn/shapes.toml"
  [ -n "$ATTN_BATCH" ] && sed -i "s/^batch = \[.*\]/batch = [$ATTN_BATCH]/" "$R/attn/shapes.toml"
  [ -n "$ATTN_SEQ" ] && sed -i "s/^seq = \[.*\]/seq = [$ATTN_SEQ]/" "$R/attn/shapes.toml"
  run_part "attn-sweep:$ATTN_VS_TORCH" 330 "$R/attn/tune.log" "$BIN/ktune" tune --kernel decode_attention \
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
fi
