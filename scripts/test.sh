#!/usr/bin/env bash
# Installs what is missing, builds ktune and runs every test suite with ctest, then builds again
# under ASan+UBSan (the asan preset) and runs every CPU suite there too (unit, nvrtc, e2e). The asan
# preset builds only what that pass runs: no gpu suite, example or kernel bench (they would skip),
# and no test that loads the libraries into an unsanitized process (python, the install consumer)
# or checks generated code rather than host code (the PTX fingerprint, the Slurm script); those run
# in the first pass. Each pass replays the fuzz targets' stored corpora (tests fuzz_corpus_*, label
# unit). Labels: unit (no CUDA), nvrtc (toolkit, no GPU), e2e (the ktune binary), gpu (skips with
# its reason when there is no device). Each phase's duration is printed at the end, pass or fail.
# Extra arguments go to both ctest runs, e.g. -L unit. KTUNE_SANITIZE_PASS=0 skips the second pass.
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
report_phases() {
  local rc=$?
  echo "test.sh: phase durations (exit $rc)"
  local p
  for p in "${phases[@]}"; do echo "  $p"; done
  printf '  %-22s %5d s\n' total $((SECONDS - run_start))
}
trap report_phases EXIT

phase install-deps scripts/install-deps.sh --with-browser --with-slurm
phase build-release scripts/build.sh release
phase test-release ctest --preset release -j "$(nproc)" "$@"
if [[ "${KTUNE_SANITIZE_PASS:-1}" != 0 ]]; then
  phase build-asan scripts/build.sh asan
  # halt_on_error: a UBSan report fails its test instead of scrolling past.
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" phase test-asan ctest --preset asan -j "$(nproc)" -LE gpu "$@"
fi
