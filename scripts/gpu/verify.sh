#!/usr/bin/env bash
# shellcheck disable=SC2054  # commas inside arguments (shapes, filters) are meant
# verify.sh: ktune's GPU verification in one device call.
#
# Runs on the GPU machine, from the repository root, with the Release executables packed into
# .devbin/ (executables at the top, their shared libraries in .devbin/lib; docs/gpu-verification.md
# says how to pack them and how to call this script through the device tool). It runs the parts
# asked for, never stops the whole run because one part failed, skips an executable that is not
# in .devbin/ with a line saying so, stops starting new parts when the time budget is spent,
# prints a short table last, and packs everything it wrote into ONE archive (DIR/verify.tgz) next
# to the table (DIR/summary.txt).
#
# usage: scripts/gpu/verify.sh [--suites LIST|all|none] [--gtest-filter PATTERN] [--examples]
#          [--benches LIST|all|none] [--sweep PRESET] [--side-by-side] [--repeat N]
#          [--budget-s S] [--out DIR] [--keep-db] [--commit HASH] [--gemm-m LIST] [--fp8-m LIST]
#          [--ops-filter TEXT]... [--gemm-vs-torch SET[:M,M...][+SET...]] [--gemm-budget N] [--gemm-sweep-s S] [--gemm-dtype bf16|fp8]
#          [--attn-vs-torch SET] [--attn-batch LIST] [--attn-seq LIST] [--attn-budget N] [--attn-sweep-s S] [--ops-vs-torch] [--rope-vs-torch]
#          [--paged-vs-torch] [--decoder-layers MODEL] [--triton] [--triton-bench]
#          [--tune-keys FILE] [--keys-budget N] [--keys-sweep-s S]
#
#   --suites LIST     gpu test executables, comma-separated short names (smoke, measure, kernels,
#                     tcgemm, wgmma, gemm_strided, fp8, ops, attn, loop, runtime, bench) or full
#                     names; "all" (default) is every known suite plus any other ktune_*gpu*
#                     executable in .devbin/
#   --gtest-filter P  passed to every suite as --gtest_filter=P
#   --examples        run ktune_gemm_example and ktune_ops_example
#   --service         `ktune serve` on the GPU: tests/service/test_serve_gpu.py (a measuring job over
#                     HTTP, its events, the report, the winner from /v1/best; needs python3 -m pytest)
#   --python          the Python package on the GPU: python/tests/test_torch_ops_gpu.py (ktune.torch
#                     against torch, graph capture, torch.compile), python/tests/test_torch_model_gpu.py
#                     (ktune.torch.optimize of transformers models against the stock ones) and
#                     bench/runtime/dispatch_cost.py (the host cost of every op's doors against the
#                     torch calls it replaces), with the native operators (built there; required)
#                     and again with the Python kernels; needs .devbin/lib/libktune_runtime.so, torch with CUDA
#   --triton          Triton kernels through ktune: python/tests/test_triton_gpu.py (the examples/triton
#                     RMSNorm and matmul tuned by ktune's worker, verified, served back through
#                     ktune.triton.autotune and compared with torch; a planted wrong and a planted
#                     crashing config never win; a second process launches the stored winner with
#                     nothing tuned; a recorded miss tuned by `python -m ktune.triton tune`); needs
#                     .devbin/ktune, .devbin/lib/libktune.so, torch and triton 3.6: triton/
#   --triton-bench    bench/triton/autotune_vs_triton.py: ktune.triton.autotune against triton.autotune
#                     (cache_results) on examples/triton's 24-config matmul: the first call of a tuned
#                     key in fresh processes (database, `ktune serve`, Triton's warm disk cache), the
#                     cold tuning of the key, 8 processes started together, every config re-timed in
#                     CUDA graphs with rotated inputs (each choice's gap to the best); same needs as
#                     --triton: triton/autotune_vs_triton.{md,json}
#   --decode-step     examples/python/decode_step.py (a decode step from ktune's ops against torch)
#   --hf-decode M     examples/python/hf_decode.py --model M (a transformers model through
#                     ktune.torch.optimize: keys recorded, tuned at --keys-budget, served; stock and
#                     optimized, eager and compiled in a graph, timed side by side; the kernels of one
#                     replay of both compiled graphs): hf/
#   --hf-phase P      all (default); tune: record and tune only, the tuned results exported to
#                     hf/M/tuned.json; time: serve and time only, from the export --hf-db names
#                     (one run split over two calls)
#   --hf-db FILE      the export a --hf-phase time run imports into its database
#   --hf-batches L    the batch sizes of --hf-decode (default 1,8)
#   --serve-load      bench/service/run_serve_load.sh on this host's CPUs (ktune serve's lookup rate
#                     and latency, idle, beside a job, beside 1,000 held connections; needs
#                     .devbin/ktune_serve_load and .devbin/capi_fixture.db): serve-load.txt
#   --serve-threads L (with or without --serve-load) the idle rows for each `ktune serve --threads N` of the comma list L:
#                     serve-load-threads-N.txt
#   --benches LIST    comma-separated, "all" or "none" (default):
#                       gemm      ktune_gemm_bench: bf16 GEMM family vs cuBLASLt (docs/perf/gemm.md)
#                       fp8       ktune_fp8_bench: fp8 GEMM vs cuBLASLt fp8 (docs/perf/gemm.md)
#                       ops       ktune_ops_bench --wide, clean and dirty flush (docs/perf/operators.md)
#                       attn      ktune_attn_bench: decode attention (docs/perf/operators.md)
#                       protocol  ktune bench on the copy kernel: bandwidth, spread, CUPTI
#                                 agreement, cost per candidate (docs/perf/measurement.md)
#                       tuning    one gemm decode shape's whole space exhaustively, the search
#                                 strategies against it, the decode shapes vs cuBLAS
#                                 (docs/perf/tuning.md)
#                       seeds     budget-16 sweeps of the sm_90 templates' kernels through the
#                                 worker (docs/perf/tuning.md)
#                       lookup    ktune_bench_cache and ktune_bench_runtime (docs/perf/cache-lookup.md)
#                       counters  CUPTI counters of the bench winners (gemm, rmsnorm, rope, softmax)
#   --sweep PRESET    ktune tune --preset PRESET into a fresh database, then a Markdown report
#   --side-by-side    ktune's operators next to torch's (bench/kernels/ops_torch_baseline.py, same
#                     flush), and the gemm/fp8 benches of this run next to cuBLASLt:
#                     side-by-side.md (add --benches gemm,fp8 for the cuBLASLt rows)
#   --repeat N        run each bench (and the side-by-side timings) N times (default 1)
#   --budget-s S      total seconds for the whole call (default 540); a part that cannot start
#                     with at least 20 s left is skipped with a message
#   --out DIR         where to write (default $OUT, the device tool's folder)
#   --keep-db         keep the databases in the archive (they hold cubins: tens of MB)
#   --commit HASH     the commit the binaries were built from, written into the table (the device
#                     gets the working tree without .git)
#   --gemm-m LIST     token counts of the gemm bench (default 1,16,128,512,2048,4096)
#   --fp8-m LIST      token counts of the fp8 bench (default 1,16,128,1024,4096)
#   --ops-filter T    replaces the ops bench's default size filters (repeatable)
#   --gemm-vs-torch S a bf16 nt sweep of shape set S (configs/shapes; ":1,16,128" keeps those M only;
#                     several sets joined by '+' run in turn, their files named gemm-vs-torch-SET.md)
#                     with the templates and cuBLASLt's algorithms as candidates, then every key's
#                     winner through ktune.Runtime against torch.mm (cuBLAS), both replayed in CUDA
#                     graphs with rotated inputs (bench/runtime/gemm_vs_torch.py): gemm-vs-torch.md;
#                     the sweep's counters of each key's winner, best template and best cuBLASLt
#                     algorithm (bench/runtime/sweep_counters.py): gemm-counters.md
#   --gemm-budget N   measurements a key of that sweep (default 24, the quick preset's)
#   --gemm-sweep-s S  seconds that sweep may take (default 330; ~10 s a key on the H200)
#   --gemm-dtype D    bf16 (default: kernel gemm against torch.mm) or fp8 (kernel fp8_gemm, e4m3
#                     with per-tensor scales, against torch._scaled_mm)
#   --attn-vs-torch S a decode_attention sweep of shape set S (every template), then every key's winner
#                     through ktune.Runtime against torch's scaled_dot_product_attention, both replayed
#                     in CUDA graphs with rotated inputs (bench/runtime/attention_vs_torch.py):
#                     attention-vs-torch.md; the sweep's counters of each key: attention-counters.md
#   --attn-batch L    the batch sizes of that sweep (default: the set's); --attn-seq L the contexts
#   --attn-budget N   measurements a key of that sweep (default 24); --attn-sweep-s S the seconds it
#                     may take (default 330)
#   --ops-vs-torch    rmsnorm, softmax and swiglu tuned at the large sizes of
#                     bench/runtime/ops_vs_torch.py, then each winner against torch eager,
#                     torch.compile and a plain Triton kernel, all replayed in CUDA graphs with
#                     rotated inputs: ops-vs-torch.md; the sweep's counters: ops-counters.md
#   --rope-vs-torch   rope_append tuned at the keys of bench/runtime/rope_append_vs_torch.py (four
#                     decoders' heads, decode and prefill, contiguous and paged caches), then each
#                     winner against the same math in torch eager and torch.compile, replayed in CUDA
#                     graphs with rotated inputs: rope-vs-torch.md
#   --paged-vs-torch  decode_attention tuned at the keys of bench/runtime/paged_attention_vs_torch.py
#                     (three decoders' heads, batch 1 and 8, 1K and 8K keys, contiguous and paged),
#                     then ktune paged (blocks of 16 and 64) against ktune contiguous and torch SDPA on
#                     the contiguous cache, replayed in CUDA graphs with rotated inputs:
#                     paged-vs-torch.md; and one call of each of ktune's sides a shape under Nsight
#                     Compute (DRAM bytes and throughput, caches flushed): paged/ncu.csv
#   --tune-keys FILE  every key of a key list (`KERNEL SHAPE DTYPE [LAYOUT]` lines, as the runtime's
#                     record_misses writes them; e.g. scripts/gpu/qwen2.5-0.5b-keys.txt): `ktune tune
#                     --shapes FILE`, `ktune bench --best` of each key (against cuBLAS where it has a
#                     baseline), `ktune query` of each key (served from the database), and a second
#                     tune that must measure nothing: tune-keys.md
#   --decoder-layers M  examples/python/decoder_layers.py on an empty database (four models' layers
#                     from ktune's ops against torch; every key recorded), then --tune-keys of model
#                     M's recorded keys, then the example again for M on the tuned database, which
#                     must record no key (every key served tuned): layers/
#   --keys-budget N   measurements a key of that sweep (default 8); --keys-sweep-s S its seconds (300)
#
# Example (device tool, carry [".devbin"]):
#   scripts/gpu/verify.sh --suites all --examples --benches gemm,fp8,ops --sweep quick --side-by-side
set -u -o pipefail

usage() { sed -n '/^# usage:/,/^# Example/p' "$0" | sed 's/^# \{0,1\}//' | sed '$d'; }

SUITES=all GTEST_FILTER="" EXAMPLES=0 SERVICE=0 PYTHON=0 TRITON=0 TRITON_BENCH=0 DECODE_STEP=0 HF_DECODE="" HF_PHASE=all HF_DB="" HF_BATCHES=1,8 SERVE_LOAD=0 SERVE_THREADS= BENCHES=none SWEEP="" SIDE=0 REPEAT=1 BUDGET=540
DIR=${OUT:-} KEEP_DB=0 COMMIT="" GEMM_M=1,16,128,512,2048,4096 FP8_M=1,16,128,1024,4096
OPS_FILTERS=() GEMM_VS_TORCH="" GEMM_BUDGET=24 GEMM_SWEEP_S=330 GEMM_DTYPE=bf16
ATTN_VS_TORCH="" ATTN_BATCH="" ATTN_SEQ="" ATTN_BUDGET=24 ATTN_SWEEP_S=330 OPS_VS_TORCH=0 ROPE_VS_TORCH=0 PAGED_VS_TORCH=0
TUNE_KEYS="" KEYS_BUDGET=8 KEYS_SWEEP_S=300 DECODER_LAYERS=""
while [ $# -gt 0 ]; do
  case $1 in
    --suites) SUITES=${2:?}; shift 2 ;;
    --gtest-filter) GTEST_FILTER=${2:?}; shift 2 ;;
    --examples) EXAMPLES=1; shift ;;
    --service) SERVICE=1; shift ;;
    --decode-step) DECODE_STEP=1; shift ;;
    --hf-decode) HF_DECODE=${2:?}; shift 2 ;;
    --hf-phase) HF_PHASE=${2:?}; shift 2 ;;
    --hf-db) HF_DB=${2:?}; shift 2 ;;
    --hf-batches) HF_BATCHES=${2:?}; shift 2 ;;
    --serve-threads) SERVE_THREADS=${2:?}; shift 2 ;;
    --serve-load) SERVE_LOAD=1; shift ;;
    --python) PYTHON=1; shift ;;
    --triton) TRITON=1; shift ;;
    --triton-bench) TRITON_BENCH=1; shift ;;
    --benches) BENCHES=${2:?}; shift 2 ;;
    --sweep) SWEEP=${2:?}; shift 2 ;;
    --side-by-side) SIDE=1; shift ;;
    --repeat) REPEAT=${2:?}; shift 2 ;;
    --budget-s) BUDGET=${2:?}; shift 2 ;;
    --out) DIR=${2:?}; shift 2 ;;
    --keep-db) KEEP_DB=1; shift ;;
    --commit) COMMIT=${2:?}; shift 2 ;;
    --gemm-m) GEMM_M=${2:?}; shift 2 ;;
    --fp8-m) FP8_M=${2:?}; shift 2 ;;
    --ops-filter) OPS_FILTERS+=(--filter "${2:?}"); shift 2 ;;
    --gemm-vs-torch) GEMM_VS_TORCH=${2:?}; shift 2 ;;
    --tune-keys) TUNE_KEYS=${2:?}; shift 2 ;;
    --decoder-layers) DECODER_LAYERS=${2:?}; shift 2 ;;
    --keys-budget) KEYS_BUDGET=${2:?}; shift 2 ;;
    --keys-sweep-s) KEYS_SWEEP_S=${2:?}; shift 2 ;;
    --gemm-budget) GEMM_BUDGET=${2:?}; shift 2 ;;
    --gemm-sweep-s) GEMM_SWEEP_S=${2:?}; shift 2 ;;
    --gemm-dtype) GEMM_DTYPE=${2:?}; shift 2 ;;
    --attn-vs-torch) ATTN_VS_TORCH=${2:?}; shift 2 ;;
    --attn-batch) ATTN_BATCH=${2:?}; shift 2 ;;
    --attn-seq) ATTN_SEQ=${2:?}; shift 2 ;;
    --attn-budget) ATTN_BUDGET=${2:?}; shift 2 ;;
    --attn-sweep-s) ATTN_SWEEP_S=${2:?}; shift 2 ;;
    --ops-vs-torch) OPS_VS_TORCH=1; shift ;;
    --rope-vs-torch) ROPE_VS_TORCH=1; shift ;;
    --paged-vs-torch) PAGED_VS_TORCH=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "verify.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ -n "$DIR" ] || { echo "verify.sh: no output folder: pass --out DIR or set OUT" >&2; exit 2; }
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "verify.sh: --repeat takes a positive integer" >&2; exit 2; }
[[ $BUDGET =~ ^[0-9]+$ ]] || { echo "verify.sh: --budget-s takes seconds" >&2; exit 2; }
[ -d .devbin ] || { echo "verify.sh: no .devbin/ here: run from the repository root, carrying .devbin" >&2; exit 2; }
[ ${#OPS_FILTERS[@]} -gt 0 ] || OPS_FILTERS=(--filter hidden=8192 --filter rows=4096,hidden=4096 --filter tokens=16384
  --filter tokens=4096 --filter cols=32768 --filter cols=262144 --filter m=16384 --filter rows=1, --filter rows=128,)

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$PWD/.devbin
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
export KTUNE_BIN="$BIN/ktune" KTUNE_CONFIGS_DIR="$PWD/configs" KTUNE_SOURCE_DIR="$PWD" KTUNE_NO_PROGRESS=1
mkdir -p "$DIR"
R=$DIR/verify          # everything goes here, then into verify.tgz
rm -rf "$R"; mkdir -p "$R"
SUMMARY=$DIR/summary.txt
START=$(date +%s)
RESERVE=15             # seconds kept for packing at the end
: > "$R/parts.tsv"     # part  status  passed  failed  skipped  seconds

say() { echo "verify: $*" | tee -a "$R/verify.log" >&2; }
left() { echo $(( BUDGET - RESERVE - ($(date +%s) - START) )); }
# budget PART MAX: prints the timeout for PART (at most MAX), or nothing when too little time is left.
budget() {
  local l; l=$(left)
  if [ "$l" -lt 20 ]; then say "$1: skipped, the time budget is spent ($(( $(date +%s) - START )) s of $BUDGET)"; \
    printf '%s\tskipped (budget)\t-\t-\t-\t0\n' "$1" >> "$R/parts.tsv"; return 1; fi
  echo $(( l < $2 ? l : $2 ))
}
have() {  # have PART EXECUTABLE: true when .devbin has it, else records it as missing
  if [ -x "$BIN/$2" ]; then return 0; fi
  say "$1: skipped, .devbin/$2 is missing"
  printf '%s\tmissing\t-\t-\t-\t0\n' "$1" >> "$R/parts.tsv"; return 1
}
record() {  # record PART RC SECONDS [LOG]: one line of the table; gtest counts when LOG is a gtest log
  local part=$1 rc=$2 secs=$3 log=${4:-} p=- f=- s=- status=ok
  if [ -n "$log" ] && [ -f "$log" ]; then
    p=$(grep -aoE '^\[  PASSED  \] [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$' || true)
    f=$(grep -aoE '^\[  FAILED  \] [0-9]+ tests?,' "$log" | tail -1 | grep -oE '[0-9]+' || true)
    s=$(grep -aoE '^\[  SKIPPED \] [0-9]+ tests?,' "$log" | tail -1 | grep -oE '[0-9]+' || true)
    p=${p:-0} f=${f:-0} s=${s:-0}
  fi
  case $rc in
    0) status=ok ;;
    124|137) status="TIMEOUT" ;;
    *) status="FAILED (exit $rc)" ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$part" "$status" "$p" "$f" "$s" "$secs" >> "$R/parts.tsv"
  say "$part: $status in ${secs} s${log:+ (passed $p, failed $f, skipped $s)}"
}
run_part() {  # run_part PART MAX_S LOG CMD...: runs CMD under the budget, output to LOG
  local part=$1 max=$2 log=$3; shift 3
  local t; t=$(budget "$part" "$max") || return 0
  local t0; t0=$(date +%s)
  timeout -k 5 "$t" "$@" > "$log" 2>&1
  local rc=$?
  record "$part" "$rc" $(( $(date +%s) - t0 ))
}

# --- the machine ---------------------------------------------------------------------------------
{ echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv,noheader 2>&1 | head -1)"
  echo "commit: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"; } > "$R/machine.txt"
if [ -x "$BIN/ktune" ]; then "$BIN/ktune" devices --json > "$R/devices.json" 2> "$R/devices.err"; fi
say "budget ${BUDGET} s; output in $R"

# --- gpu test suites -----------------------------------------------------------------------------
KNOWN_SUITES="smoke measure kernels tcgemm wgmma gemm_strided fp8 ops attn loop runtime bench"
suite_exe() { case $1 in ktune_*) echo "$1" ;; smoke) echo ktune_gpu_smoke ;; *) echo "ktune_$1_gpu_tests" ;; esac; }
suite_list=()
case $SUITES in
  none) ;;
  all)
    for s in $KNOWN_SUITES; do suite_list+=("$(suite_exe "$s")"); done
    for x in "$BIN"/ktune_*gpu*; do
      [ -x "$x" ] || continue
      n=$(basename "$x"); [[ " ${suite_list[*]} " == *" $n "* ]] || suite_list+=("$n")
    done ;;
  *) IFS=, read -r -a names <<< "$SUITES"; for s in "${names[@]}"; do suite_list+=("$(suite_exe "$s")"); done ;;
esac
mkdir -p "$R/suites"
for exe in "${suite_list[@]}"; do
  have "$exe" "$exe" || continue
  t=$(budget "$exe" 300) || continue
  t0=$(date +%s)
  timeout -k 5 "$t" "$BIN/$exe" ${GTEST_FILTER:+--gtest_filter="$GTEST_FILTER"} \
    --gtest_output="json:$R/suites/$exe.json" > "$R/suites/$exe.log" 2>&1
  record "$exe" $? $(( $(date +%s) - t0 )) "$R/suites/$exe.log"
done

# --- examples ------------------------------------------------------------------------------------
if [ "$EXAMPLES" = 1 ]; then
  mkdir -p "$R/examples"
  for ex in ktune_gemm_example ktune_ops_example; do
    have "$ex" "$ex" || continue
    run_part "$ex" 60 "$R/examples/$ex.log" "$BIN/$ex" --db "$R/examples/$ex.db"
  done
fi

# --- the Python package --------------------------------------------------------------------------
if [ "$PYTHON" = 1 ]; then
  mkdir -p "$R/python"
  if [ -f "$BIN/lib/libktune_runtime.so" ]; then
    export KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so"
    # the native operators must build here (a failure fails the parts); the door bench runs again
    # with the Python kernels for the comparison
    run_part python-torch-ops 240 "$R/python/torch_ops.log" env KTUNE_TORCH_NATIVE=1 \
      python3 python/tests/test_torch_ops_gpu.py
    run_part python-torch-model 240 "$R/python/torch_model.log" env KTUNE_TORCH_NATIVE=1 \
      python3 python/tests/test_torch_model_gpu.py
    run_part dispatch-cost 150 "$R/python/dispatch_cost.log" env KTUNE_DB="$R/python/dispatch.db" \
      KTUNE_TORCH_NATIVE=1 python3 bench/runtime/dispatch_cost.py --json "$R/python/dispatch_cost.json"
    run_part dispatch-cost-python 150 "$R/python/dispatch_cost_python.log" env KTUNE_DB="$R/python/dispatch.db" \
      KTUNE_TORCH_NATIVE=0 python3 bench/runtime/dispatch_cost.py --json "$R/python/dispatch_cost_python.json"
  else
    say "python: skipped, .devbin/lib/libktune_runtime.so is missing"
    printf 'python\tmissing\t-\t-\t-\t0\n' >> "$R/parts.tsv"
  fi
fi
if [ "$TRITON" = 1 ]; then
  mkdir -p "$R/triton"
  if [ -f "$BIN/lib/libktune.so" ] && have triton ktune; then
    export KTUNE_LIBRARY="$BIN/lib/libktune.so"
    run_part triton 420 "$R/triton/triton_gpu.log" python3 python/tests/test_triton_gpu.py
  elif [ ! -f "$BIN/lib/libktune.so" ]; then
    say "triton: skipped, .devbin/lib/libktune.so is missing"
    printf 'triton\tmissing\t-\t-\t-\t0\n' >> "$R/parts.tsv"
  fi
fi
if [ "$TRITON_BENCH" = 1 ]; then
  mkdir -p "$R/triton"
  if [ -f "$BIN/lib/libktune.so" ] && have triton-bench ktune; then
    export KTUNE_LIBRARY="$BIN/lib/libktune.so"
    run_part triton-bench 540 "$R/triton/autotune_vs_triton.log" python3 bench/triton/autotune_vs_triton.py \
      --out "$R/triton"
  elif [ ! -f "$BIN/lib/libktune.so" ]; then
    say "triton-bench: skipped, .devbin/lib/libktune.so is missing"
    printf 'triton-bench\tmissing\t-\t-\t-\t0\n' >> "$R/parts.tsv"
  fi
fi
if [ "$DECODE_STEP" = 1 ]; then
  mkdir -p "$R/python"
  if [ -f "$BIN/lib/libktune_runtime.so" ]; then
    export KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so"
    run_part decode-step 420 "$R/python/decode_step.log" python3 examples/python/decode_step.py \
      --tune "$KTUNE_BIN" --db "$R/python/decode.db" --json "$R/python/decode_step.json"
  else
    say "python: skipped, .devbin/lib/libktune_runtime.so is missing"
    printf 'python\tmissing\t-\t-\t-\t0\n' >> "$R/parts.tsv"
  fi
fi

# --- benches -------------------------------------------------------------------------------------
bench_gemm() {  # $1: output folder
  have gemm-bench ktune_gemm_bench || return 0
  run_part gemm-bench 240 "$1/gemm.txt" "$BIN/ktune_gemm_bench" --m "$GEMM_M" \
    --layers q_proj,k_proj,gate_up_proj,down_proj --verbose --csv "$1/gemm.csv"
}
bench_fp8() {
  have fp8-bench ktune_fp8_bench || return 0
  run_part fp8-bench 180 "$1/fp8.txt" "$BIN/ktune_fp8_bench" --m "$FP8_M" --verbose --csv "$1/fp8.csv"
}
l2_flush() {  # the harness's name of the torch script's flush: clean -> l2-clean, dirty -> l2
  if [ "$1" = clean ]; then echo l2-clean; else echo l2; fi
}
bench_ops() {
  have ops-bench ktune_ops_bench || return 0
  for f in clean dirty; do
    run_part "ops-bench-$f" 150 "$1/ops-$f.txt" "$BIN/ktune_ops_bench" --wide --verbose --flush "$(l2_flush "$f")" \
      "${OPS_FILTERS[@]}" --csv "$1/ops-$f.csv"
  done
}
bench_attn() {
  have attn-bench ktune_attn_bench || return 0
  run_part attn-bench 150 "$1/attn.txt" "$BIN/ktune_attn_bench" --csv "$1/attn.csv"
}
kbench() {  # kbench FOLDER NAME ARGS...: one `ktune bench --json` into FOLDER/NAME.json
  local d=$1 name=$2; shift 2
  local t; t=$(budget "protocol:$name" 60) || return 0
  echo "+ ktune bench $*" >> "$d/bench.log"
  timeout -k 5 "$t" "$BIN/ktune" bench --json "$@" > "$d/$name.json" 2>> "$d/bench.log" \
    || echo "  (exit $? for $name)" >> "$d/bench.log"
}
bench_protocol() {
  have protocol ktune || return 0
  local d=$1/protocol t0; mkdir -p "$d"; t0=$(date +%s)
  for n in 1048576 16777216 67108864 268435456 536870912; do
    kbench "$d" "copy_n$n" --kernel copy --shape n=$n --dtype f32
  done
  kbench "$d" copy_n536870912_u8 --kernel copy --shape n=536870912 --dtype f32 --config '{"unroll":8}'
  kbench "$d" copy_bf16_n268435456 --kernel copy --shape n=268435456 --dtype bf16
  for i in 1 2 3 4 5; do kbench "$d" "repeat_$i" --kernel copy --shape n=67108864 --dtype f32; done
  kbench "$d" activity_1ms --kernel copy --shape n=536870912 --dtype f32 --activity-timer
  kbench "$d" activity_40us --kernel copy --shape n=16777216 --dtype f32 --activity-timer
  kbench "$d" counters_4g --kernel copy --shape n=1073741824 --dtype f32 --counters --max-time-ms 300
  kbench "$d" cost_20us --kernel copy --shape n=11534336 --dtype f32 --config '{"unroll":8}' --baseline default
  kbench "$d" cost_1ms --kernel copy --shape n=536870912 --dtype f32 --config '{"unroll":8}' --baseline default
  # The default protocol (rotated inputs, graph batches below 1 ms) against the former one (dirty L2
  # flush, events around each launch above 10 us) on a decode GEMM and cuBLAS (docs/perf/measurement.md).
  local g=(--kernel gemm --shape m=16,n=14336,k=5120 --dtype bf16 --baseline cublas)
  kbench "$d" decode_gemm_default "${g[@]}"
  kbench "$d" decode_gemm_former "${g[@]}" --flush l2 --batch-threshold-us 10
  kbench "$d" decode_gemm_m1_default --kernel gemm --shape m=1,n=14336,k=5120 --dtype bf16 --baseline cublas
  python3 "$HERE/verify_tables.py" protocol "$d" > "$d/summary.md" 2>> "$d/bench.log"
  record protocol $? $(( $(date +%s) - t0 ))
}
ktune_tune() {  # ktune_tune FOLDER NAME DB MAX_S ARGS...: one `ktune tune --json`, wall seconds in NAME.wall
  local d=$1 name=$2 db=$3 max=$4; shift 4
  local t; t=$(budget "tune:$name" "$max") || return 1
  echo "+ ktune tune --db $db $*" >> "$d/tune.log"
  local t0; t0=$(date +%s.%N)
  timeout -k 5 "$t" "$BIN/ktune" tune --json --db "$db" "$@" > "$d/$name.json" 2>> "$d/tune.log" \
    || echo "  (exit $? for $name)" >> "$d/tune.log"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }' > "$d/$name.wall"
}
bench_tuning() {
  have tuning ktune || return 0
  local d=$1/tuning t0 shape=m=16,n=4096,k=4096 space=$HERE/gemm_decode_space.toml arch configs
  mkdir -p "$d"; t0=$(date +%s)
  arch=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d.get("devices",d); d=d[0] if isinstance(d,list) else d; print(d.get("arch","sm_90"))' "$R/devices.json" 2>/dev/null || echo sm_90)
  local t; t=$(budget tuning 120) || return 0
  timeout -k 5 "$t" "$BIN/ktune" tune --json --db "$d/count.db" --kernel gemm --space "$space" --shape "$shape" \
    --dtype bf16 --compile-only --arch "$arch" --budget 1 > "$d/count.json" 2>> "$d/tune.log"
  configs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keys"][0]["candidates"])' "$d/count.json" 2>/dev/null || echo 0)
  say "tuning: gemm $shape bf16 has $configs configs in $(basename "$space") ($arch)"
  if [ "$configs" -le 0 ] || [ "$configs" -gt 1500 ]; then
    say "tuning: $configs configs is not a sweep to run exhaustively in one call; skipped"
    record tuning 2 $(( $(date +%s) - t0 )); return 0
  fi
  local exh=(--kernel gemm --space "$space" --shape "$shape" --dtype bf16 --max-time-ms 100)
  ktune_tune "$d" exhaustive_cold "$d/sweep.db" 150 "${exh[@]}" --strategy exhaustive --budget 0 || true
  ktune_tune "$d" exhaustive_warm "$d/sweep.db" 120 "${exh[@]}" --strategy exhaustive --budget 0 --retune || true
  for s in random halving model; do
    cp "$d/sweep.db" "$d/$s.db" 2>/dev/null  # a warm compile cache; --retune measures everything again
    ktune_tune "$d" "strategy_$s" "$d/$s.db" 60 "${exh[@]}" --strategy $s --budget 40 --retune || true
  done
  for m in 1 16; do
    for layer in "n=4096,k=4096" "n=14336,k=4096" "n=4096,k=14336"; do
      local tag=m${m}_${layer//[=,]/_}
      ktune_tune "$d" "decode_$tag" "$d/sweep.db" 60 --kernel gemm --shape "m=$m,$layer" --dtype bf16 --budget 32 --max-time-ms 100 || continue
      t=$(budget "tuning:cublas_$tag" 60) || continue
      timeout -k 5 "$t" "$BIN/ktune" bench --json --kernel gemm --shape "m=$m,$layer" --dtype bf16 --best \
        --baseline cublas --db "$d/sweep.db" > "$d/cublas_$tag.json" 2>> "$d/tune.log"
    done
  done
  python3 "$HERE/verify_tables.py" tuning "$d" "$shape" bf16 "$configs" "$space" > "$d/summary.md" 2>> "$d/tune.log"
  record tuning $? $(( $(date +%s) - t0 ))
}
bench_seeds() {
  have seeds ktune || return 0
  local d=$1/seeds t0; mkdir -p "$d"; t0=$(date +%s)
  ktune_tune "$d" rmsnorm "$d/tune.db" 90 --kernel rmsnorm --shape rows=16384,hidden=8192 --dtype bf16 --budget 16
  ktune_tune "$d" rope "$d/tune.db" 90 --kernel rmsnorm_rope --shape tokens=16384,heads_q=32,heads_kv=8,head_dim=128 \
    --dtype bf16 --layout neox --budget 16
  ktune_tune "$d" softmax "$d/tune.db" 90 --kernel softmax --shape rows=256,cols=262144 --dtype bf16 --budget 16
  ktune_tune "$d" fp8 "$d/tune.db" 90 --kernel fp8_gemm --shape m=4096,n=4096,k=4096 --dtype fp8e4m3 --layout nt --budget 16
  ktune_tune "$d" fp8-1024 "$d/tune.db" 90 --kernel fp8_gemm --shape m=1024,n=28672,k=4096 --dtype fp8e4m3 --layout nt --budget 16
  python3 "$HERE/verify_tables.py" winners "$d" > "$d/summary.md" 2>> "$d/tune.log"
  record seeds $? $(( $(date +%s) - t0 ))
}
bench_lookup() {
  if have lookup-bench ktune_bench_cache; then
    KTUNE_BENCH_DB=$1/lookup.db run_part lookup-bench 120 "$1/bench_cache.txt" "$BIN/ktune_bench_cache" \
      --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
  fi
  if have runtime-bench ktune_bench_runtime; then
    run_part runtime-bench 60 "$1/bench_runtime.txt" "$BIN/ktune_bench_runtime"
  fi
}
# CUPTI metric sets: memory-bound kernels and GEMMs, each with a second set of issue-stall reasons.
MEM="dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum"
MMA="sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,gpu__time_duration.sum"
STALL="smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum"
bench_counters() {
  have counters ktune || return 0
  local d=$1/counters t0; mkdir -p "$d"; t0=$(date +%s)
  ctr() {  # ctr NAME METRICS KTUNE-BENCH-ARGS...
    local name=$1 set=$2; shift 2
    local t; t=$(budget "counters:$name" 60) || return 0
    timeout -k 5 "$t" "$BIN/ktune" bench "$@" --counters --metrics "$set" --json > "$d/$name.json" 2> "$d/$name.err"
    echo "$name rc=$?" >> "$d/counters.log"
  }
  local g=(--kernel gemm --shape m=4096,n=4096,k=4096 --dtype bf16 --baseline cublas
    --config '{"template":"wgmma_tma","params":{"BLOCK_M":128,"BLOCK_N":256,"BLOCK_K":64,"STAGES":4,"SPLIT_K":1,"SWIZZLE":8}}')
  ctr gemm-wgmma_tma-4096-mma "$MMA" "${g[@]}"; ctr gemm-wgmma_tma-4096-stall "$STALL" "${g[@]}"
  local rn=(--kernel rmsnorm --shape rows=16384,hidden=8192 --dtype bf16
    --config '{"template":"bulk","params":{"THREADS":256,"STAGES":3,"STEPS":4,"WRITE":1}}')
  ctr rmsnorm-bulk-mem "$MEM" "${rn[@]}"; ctr rmsnorm-bulk-stall "$STALL" "${rn[@]}"
  local rp=(--kernel rmsnorm_rope --shape tokens=16384,heads_q=32,heads_kv=8,head_dim=128 --dtype bf16 --layout neox
    --config '{"template":"bulk","params":{"THREADS":256,"STAGES":2,"STEPS":4}}')
  ctr rope-bulk-mem "$MEM" "${rp[@]}"; ctr rope-bulk-stall "$STALL" "${rp[@]}"
  local sc=(--kernel softmax --shape rows=64,cols=262144 --dtype bf16
    --config '{"template":"cluster","params":{"THREADS":256,"CLUSTER":8}}')
  ctr softmax-cluster-mem "$MEM" "${sc[@]}"; ctr softmax-cluster-stall "$STALL" "${sc[@]}"
  record counters 0 $(( $(date +%s) - t0 ))
}

ALL_BENCHES="gemm fp8 ops attn protocol tuning seeds lookup counters"
case $BENCHES in none) bench_list=() ;; all) read -r -a bench_list <<< "$ALL_BENCHES" ;;
  *) IFS=, read -r -a bench_list <<< "$BENCHES" ;; esac
for b in "${bench_list[@]}"; do
  [[ " $ALL_BENCHES " == *" $b "* ]] || { say "bench '$b': unknown (known: $ALL_BENCHES); skipped"; continue; }
done
for i in $(seq 1 "$REPEAT"); do
  d=$R/benches; [ "$REPEAT" -gt 1 ] && d=$R/benches/run$i
  mkdir -p "$d"
  for b in "${bench_list[@]}"; do
    [[ " $ALL_BENCHES " == *" $b "* ]] && "bench_$b" "$d"
  done
done

# --- a tuning sweep of a preset, and its report --------------------------------------------------
if [ -n "$SWEEP" ] && have "sweep:$SWEEP" ktune; then
  mkdir -p "$R/sweep"
  run_part "sweep:$SWEEP" 300 "$R/sweep/tune.log" "$BIN/ktune" tune --preset "$SWEEP" --db "$R/sweep/sweep.db" --json
  # the JSON document went to the log together with stderr; the report is the readable result
  "$BIN/ktune" report --db "$R/sweep/sweep.db" --format md --out "$R/sweep/report.md" > "$R/sweep/report.log" 2>&1
  record "report:$SWEEP" $? 0
fi

# --- every key of a key list: tuned, benched at its winner, served, and not measured again ----------
# --- decoder layers from ktune's ops: record every key, tune one model's, serve them tuned ---------
layers_example() {  # layers_example PART DB RECORD_DIR [ARGS...]
  local part=$1 db=$2 dir=$3; shift 3
  run_part "$part" 240 "$R/layers/$part.log" env KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" \
    python3 examples/python/decoder_layers.py --db "$db" --record "$dir" --json "$R/layers/$part.json" "$@"
}
if [ -n "$DECODER_LAYERS" ]; then
  mkdir -p "$R/layers"
  layers_example layers-record "$R/layers/empty.db" "$R/layers/recorded"
  if [ -s "$R/layers/recorded/$DECODER_LAYERS.txt" ]; then
    TUNE_KEYS=$R/layers/recorded/$DECODER_LAYERS.txt
  else
    say "layers: no keys recorded for $DECODER_LAYERS; its tune is skipped"
  fi
fi

if [ -n "$TUNE_KEYS" ] && have tune-keys ktune; then
  d=$R/tune-keys; mkdir -p "$d"; cp "$TUNE_KEYS" "$d/keys.txt"
  run_part tune-keys "$KEYS_SWEEP_S" "$d/tune.log" "$BIN/ktune" tune --shapes "$TUNE_KEYS" \
    --budget "$KEYS_BUDGET" --db "$d/keys.db" --json
  i=0
  while read -r kernel shape dtype layout _; do
    case $kernel in '' | '#'*) continue ;; esac
    i=$((i + 1))
    t=$(budget "bench-best:$i" 60) || break
    base=()
    # cuBLAS has a baseline for gemm's plain and +bias forms (it has no SiLU epilogue).
    if [ "$kernel" = gemm ] && [[ ${layout:-nt} != *silu* ]]; then base=(--baseline cublas); fi
    timeout -k 5 "$t" "$BIN/ktune" bench --kernel "$kernel" --shape "$shape" --dtype "$dtype" \
      ${layout:+--layout "$layout"} --best --db "$d/keys.db" "${base[@]}" --json > "$d/bench-$i.json" 2> "$d/bench-$i.err"
    echo "bench $i rc=$?" >> "$d/bench.log"
    "$BIN/ktune" query --db "$d/keys.db" --kernel "$kernel" --shape "$shape" --dtype "$dtype" \
      ${layout:+--layout "$layout"} --json > "$d/query-$i.json" 2> "$d/query-$i.err"
    echo "query $i rc=$?" >> "$d/bench.log"
  done < "$TUNE_KEYS"
  run_part tune-keys-again 120 "$d/again.log" "$BIN/ktune" tune --shapes "$TUNE_KEYS" \
    --budget "$KEYS_BUDGET" --db "$d/keys.db" --json
  python3 "$HERE/verify_tables.py" tune-keys "$d" > "$d/summary.md" 2> "$d/table.err"
  record tune-keys-table $? 0
  if [ -n "$DECODER_LAYERS" ]; then
    layers_example layers-tuned "$d/keys.db" "$R/layers/again" --models "$DECODER_LAYERS"
    missed=$(grep -cv '^#' "$R/layers/again/$DECODER_LAYERS.txt" 2> /dev/null)
    say "layers: $DECODER_LAYERS on the tuned database recorded ${missed:-no file of} key(s) not served tuned"
    [ "${missed:-1}" = 0 ]; record layers-all-tuned $? 0
  fi
fi

# --- ktune serve on the GPU --------------------------------------------------------------------------
if [ "$SERVICE" = 1 ] && have service ktune; then
  mkdir -p "$R/service"
  if python3 -c 'import pytest' 2> /dev/null; then
    run_part service-gpu 240 "$R/service/pytest.log" python3 -m pytest -q -p no:cacheprovider \
      tests/service/test_serve_gpu.py
  else
    say "service: skipped, python3 has no pytest here"
  fi
fi

if [ -n "$HF_DECODE" ] && [ -f "$BIN/lib/libktune_runtime.so" ] && have hf-decode ktune; then
  mkdir -p "$R/hf/$HF_DECODE"
  hf_args=(--model "$HF_DECODE" --phase "$HF_PHASE" --batches "$HF_BATCHES" --out "$R/hf/$HF_DECODE" --db "$R/hf/$HF_DECODE/ktune.db")
  [ "$HF_PHASE" != time ] && hf_args+=(--tune "$BIN/ktune" --budget "${KEYS_BUDGET:-8}")
  [ "$HF_PHASE" != tune ] && hf_args+=(--profile)
  if [ "$HF_PHASE" = time ] && [ -n "$HF_DB" ]; then
    "$BIN/ktune" cache import "$HF_DB" --db "$R/hf/$HF_DECODE/ktune.db" > "$R/hf/$HF_DECODE/import.log" 2>&1 ||
      say "hf-decode: importing $HF_DB failed (hf/$HF_DECODE/import.log)"
  fi
  KTUNE_LIBRARY="$BIN/lib/libktune_runtime.so" run_part "hf-decode-$HF_DECODE-$HF_PHASE" 560 \
    "$R/hf/$HF_DECODE.$HF_PHASE.md" python3 examples/python/hf_decode.py "${hf_args[@]}"
  if [ "$HF_PHASE" = tune ]; then  # the results without their cubins: small enough to carry back
    "$BIN/ktune" cache export --out "$R/hf/$HF_DECODE/tuned.json" --db "$R/hf/$HF_DECODE/ktune.db" \
      > /dev/null 2>&1 || say "hf-decode: exporting the tuned database failed"
  fi
fi
if { [ "$SERVE_LOAD" = 1 ] || [ -n "$SERVE_THREADS" ]; } && have serve-load ktune && have serve-load ktune_serve_load; then
  if [ -f "$BIN/capi_fixture.db" ]; then  # the script's build-tree layout, over this folder's binaries
    tree=$(mktemp -d); mkdir -p "$tree/cli" "$tree/bench/service"
    ln -s "$BIN/ktune" "$tree/cli/ktune"; ln -s "$BIN/ktune_serve_load" "$tree/bench/service/ktune_serve_load"
    [ "$SERVE_LOAD" = 1 ] && run_part serve-load 200 "$R/serve-load.txt" bench/service/run_serve_load.sh "$tree" \
      "$BIN/capi_fixture.db" "Test GPU Alpha" 20000,40000
    for n in ${SERVE_THREADS//,/ }; do
      KTUNE_SERVE_ARGS="--threads $n" KTUNE_SERVE_LOAD_IDLE_ONLY=1 run_part "serve-load-threads-$n" 60 \
        "$R/serve-load-threads-$n.txt" bench/service/run_serve_load.sh "$tree" "$BIN/capi_fixture.db" \
        "Test GPU Alpha" 20000
    done
  else
    say "serve-load: skipped, $BIN/capi_fixture.db is missing"
  fi
fi

# --- tuned sweeps against torch in CUDA graphs (gemm, decode attention, operators) ---------------
# shellcheck source=scripts/gpu/vs_torch.sh
source "$HERE/vs_torch.sh"

# --- side by side: torch, cuBLASLt -----------------------------------------------------------------
if [ "$SIDE" = 1 ]; then
  mkdir -p "$R/side"
  TORCH_SCRIPT=bench/kernels/ops_torch_baseline.py
  TORCH_SIZES=(--filter rows=1,hidden=4096 --filter rows=128,hidden=4096 --filter rows=4096,hidden=4096
    --filter rows=16384,hidden=8192 --filter rows=4096,cols=32768 --filter rows=64,cols=262144
    --filter m=128,i=14336 --filter m=16384,i=14336)
  for i in $(seq 1 "$REPEAT"); do
    for f in clean dirty; do
      if have "side:ops-$f" ktune_ops_bench; then
        run_part "side:ops-$f" 150 "$R/side/ops-$f-$i.txt" "$BIN/ktune_ops_bench" --wide --flush "$(l2_flush "$f")" \
          "${TORCH_SIZES[@]}" --csv "$R/side/ops-$f-$i.csv"
      fi
      if [ ! -f "$TORCH_SCRIPT" ]; then
        say "side:torch-$f: skipped, no bench/kernels/ops_torch_baseline.py"
      elif python3 -c 'import torch' 2> /dev/null; then
        run_part "side:torch-$f" 120 "$R/side/torch-$f-$i.txt" python3 "$TORCH_SCRIPT" --flush "$f"
      else
        say "side:torch-$f: skipped, python3 has no torch here"
      fi
    done
  done
  python3 "$HERE/verify_tables.py" side-by-side "$R" > "$R/side-by-side.md" 2> "$R/side/table.err"
  record side-by-side $? 0
fi

# --- the table, and one archive --------------------------------------------------------------------
{
  echo "ktune GPU verification"; cat "$R/machine.txt"
  echo "wall: $(( $(date +%s) - START )) s of a ${BUDGET} s budget"
  printf '%-34s %-18s %7s %7s %7s %6s\n' part status passed failed skipped sec
  while IFS=$'\t' read -r part status p f s secs; do
    printf '%-34s %-18s %7s %7s %7s %6s\n' "$part" "$status" "$p" "$f" "$s" "$secs"
  done < "$R/parts.tsv"
  bad=$(awk -F'\t' '$2 !~ /^(ok|missing|skipped)/' "$R/parts.tsv" | wc -l)
  echo "parts not ok: $bad"
} > "$SUMMARY"
cp "$SUMMARY" "$R/summary.txt"
[ "$KEEP_DB" = 1 ] || find "$R" \( -name '*.db' -o -name '*.db-wal' -o -name '*.db-shm' \) -exec rm -f {} +
tar czf "$DIR/verify.tgz" -C "$DIR" verify && rm -rf "$R"
cat "$SUMMARY"
echo "archive: $DIR/verify.tgz ($(du -h "$DIR/verify.tgz" | cut -f1))"
