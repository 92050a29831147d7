#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/) with clang 14, libFuzzer and ASan/UBSan (the `fuzz` preset) and
# runs each for a while.
# Usage: scripts/fuzz.sh [-j JOBS] [SECONDS_PER_TARGET] [TARGET...]
#   defaults: 1 target at a time, 60 s each, every target:
#   shape config_json config_space preset shape_set export_import worker_protocol
# The stored seeds (fuzz/corpus/<target>/) are only read: new inputs go to build/fuzz/corpus/<target>/,
# reproducers of findings to build/fuzz/findings/<target>/, the log to build/fuzz/<target>.log. A run
# goes on after a finding (libFuzzer's fork mode with -ignore_crashes), so one run collects them all.
# Once a finding is fixed, copy its reproducer into fuzz/corpus/<target>/: ctest replays that folder
# on every build (test fuzz_corpus_<target>). docs/hardening.md records the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=1
if [[ "${1:-}" == "-j" ]]; then
  jobs="$2"
  shift 2
fi
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
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

fuzz_one() {
  local t="$1" work="build/fuzz/corpus/$1" findings="build/fuzz/findings/$1"
  mkdir -p "$work" "$findings"
  local dict=()
  [[ -f "fuzz/dict/$t.dict" ]] && dict=(-dict="fuzz/dict/$t.dict")
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: one that needs 2 GiB is a finding.
  "build/fuzz/fuzz/ktune_fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$findings/" "$work" "fuzz/corpus/$t" >"build/fuzz/$t.log" 2>&1 || true
  local found
  found=$(find "$findings" -type f | wc -l)
  echo "fuzz: $t: $(grep -E '^#[0-9]+: cov' "build/fuzz/$t.log" | tail -1); $found finding(s) in $findings/"
}

for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  echo "fuzz: $t for ${seconds}s (log build/fuzz/$t.log)"
  fuzz_one "$t" &
done
wait
if [[ -n "$(find build/fuzz/findings -type f 2>/dev/null)" ]]; then
  echo "fuzz: findings to fix:" >&2
  find build/fuzz/findings -type f >&2
  exit 1
fi
