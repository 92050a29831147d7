#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, after the binaries were packed into
# .devbin/ with ../shared/device/pack.sh (see docs/perf/README.md). Writes every log under $OUT.
#   scripts/gpu/run_on_device.sh [EXTRA_SCRIPT...]
# Each EXTRA_SCRIPT (e.g. scripts/gpu/measure_bench.sh) is run after the tests with KTUNE_BIN set.
set -uo pipefail
: "${OUT:?OUT must name the folder for logs}"
export LD_LIBRARY_PATH="$PWD/.devbin/lib:${LD_LIBRARY_PATH:-}"
export KTUNE_BIN="$PWD/.devbin/ktune"
export KTUNE_SOURCE_DIR="$PWD"
summary="$OUT/summary.txt"
: >"$summary"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv >"$OUT/nvidia-smi.csv" 2>&1
if [[ -x "$KTUNE_BIN" ]]; then
  "$KTUNE_BIN" devices --json >"$OUT/devices.json" 2>"$OUT/devices.err"
  echo "ktune devices --json: exit $?" >>"$summary"
fi

for t in .devbin/ktune_*gpu* .devbin/*_gpu_tests; do
  [[ -x "$t" ]] || continue
  name=$(basename "$t")
  [[ -f "$OUT/$name.log" ]] && continue
  start=$(date +%s)
  timeout "${GPU_TEST_TIMEOUT:-300}" "$t" --gtest_output="json:$OUT/$name.json" >"$OUT/$name.log" 2>&1
  rc=$?
  echo "$name: exit $rc in $(( $(date +%s) - start )) s; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/$name.log" | tr '\n' ' ')" >>"$summary"
done

for extra in "$@"; do
  start=$(date +%s)
  bash "$extra" >"$OUT/$(basename "$extra" .sh).log" 2>&1
  echo "$extra: exit $? in $(( $(date +%s) - start )) s" >>"$summary"
done
cat "$summary"
