#!/usr/bin/env bash
# Installs what is missing, builds ktune and runs every test suite with ctest, then builds again
# under ASan+UBSan (the asan preset) and runs every CPU suite there too (unit, nvrtc, e2e). The asan
# preset builds only what that pass runs: no gpu suite, example or kernel bench (they would skip),
# and no test that loads the libraries into an unsanitized process (python, the install consumer)
# or checks generated code rather than host code (the PTX fingerprint, the Slurm script); those run
# in the first pass. Each pass replays the fuzz targets' stored corpora (tests fuzz_corpus_*, label
# unit). Labels: unit (no CUDA), nvrtc (toolkit, no GPU), e2e (the ktune binary), gpu (skips with
# its reason when there is no device). Each phase's duration is printed at the end, pass or fail.
# The sanitizer build runs beside the release suites at the lowest priority (build-asan-rest is what
# is left of it after them). Extra arguments go to both ctest runs, e.g. -L unit.
# KTUNE_SANITIZE_PASS=0 skips the second pass.
set -euo pipefail
cd "$(dirname "$0")/.."

phases=()
run_start=$SECONDS
phase() {  # phase NAME COMMAND...: runs COMMAND and records how long it took (and whether it failed)
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  phases+=("$(printf '%-22s %5d s%s' "$name" $((SECONDS - start)) "$( ((rc == 0)) || echo "  (failed: exit $rc)")")")
  return $rc
}
report_phases() {  # report_phases EXIT_CODE
  local rc=$1
  echo "test.sh: phase durations (exit $rc)"
  local p
  for p in "${phases[@]}"; do echo "  $p"; done
  printf '  %-22s %5d s\n' total $((SECONDS - run_start))
}

sanitize=1
[[ "${KTUNE_SANITIZE_PASS:-1}" == 0 ]] && sanitize=0
asan_pid=""
on_exit() {
  local rc=$?
  if [[ -n $asan_pid ]]; then  # a failed release pass: stop the sanitizer build too
    kill -- "-$asan_pid" 2> /dev/null || kill "$asan_pid" 2> /dev/null || true
  fi
  report_phases "$rc"
}
trap on_exit EXIT

phase install-deps scripts/install-deps.sh --with-browser --with-slurm
phase build-release scripts/build.sh release
if ((sanitize)); then
  # The sanitizer build starts now, at the lowest priority, beside the release suites: it takes the
  # CPU they leave idle (waits on subprocesses, the one long NVRTC suite at the end). Its own process
  # group (set -m) lets a failed release pass stop it; it must stay in this session: with the
  # kernel's autogroup scheduling a new session (setsid) gets its own CPU share, and nice then ranks
  # it only against itself (measured: the release suites took 867 s instead of 456 s). Its log is
  # build/asan-build.log, printed when it fails.
  mkdir -p build
  set -m
  nice -n 19 scripts/build.sh asan > build/asan-build.log 2>&1 &
  asan_pid=$!
  set +m
fi
phase test-release ctest --preset release -j "$(nproc)" "$@"
if ((sanitize)); then
  asan_build() {
    local rc=0
    wait "$asan_pid" || rc=$?
    asan_pid=""
    if ((rc != 0)); then
      tail -n 200 build/asan-build.log
      return "$rc"
    fi
    tail -n 1 build/asan-build.log
  }
  phase build-asan-rest asan_build
  # halt_on_error: a UBSan report fails its test instead of scrolling past.
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" phase test-asan ctest --preset asan -j "$(nproc)" -LE gpu "$@"
fi
