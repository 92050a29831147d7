#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/) with clang 14, libFuzzer and ASan/UBSan (the `fuzz` preset) and
# runs each for a while, one after another.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60 s; every target)
#   targets: shape config_json config_space preset shape_set export_import worker_protocol
# The stored seeds (fuzz/corpus/<target>/) are only read: new inputs go to build/fuzz/corpus/<target>/,
# a crash's reproducer to build/fuzz/findings/<target>/, the log to build/fuzz/<target>.log. Once a
# finding is fixed, copy its reproducer into fuzz/corpus/<target>/: ctest replays that folder on
# every build (test fuzz_corpus_<target>). docs/hardening.md records the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(shape config_json config_space preset shape_set export_import worker_protocol)
fi
scripts/install-deps.sh --with-fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

export KTUNE_CONFIGS_DIR="$PWD/configs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
for t in "${targets[@]}"; do
  work="build/fuzz/corpus/$t"
  findings="build/fuzz/findings/$t"
  mkdir -p "$work" "$findings"
  echo "fuzz: $t for ${seconds}s (log build/fuzz/$t.log)"
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: one that needs 2 GiB is a finding.
  if ! "build/fuzz/fuzz/ktune_fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$findings/" "$work" "fuzz/corpus/$t" >"build/fuzz/$t.log" 2>&1; then
    echo "fuzz: $t found something: see build/fuzz/$t.log and $findings/" >&2
    status=1
  fi
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+ +DONE" "build/fuzz/$t.log" || true
done
exit "$status"
