#!/usr/bin/env bash
# Installs what is missing, builds ktune and runs every test suite with ctest, then builds again
# under ASan+UBSan (the asan preset) and runs every CPU suite there too (unit, nvrtc, e2e; the gpu
# suites are left out of that pass: they skip without a GPU). Each pass replays the fuzz targets'
# stored corpora (tests fuzz_corpus_*, label unit). Labels: unit (no CUDA), nvrtc (toolkit, no GPU),
# e2e (the ktune binary), gpu (skips with its reason when there is no device).
# Extra arguments go to both ctest runs, e.g. -L unit. KTUNE_SANITIZE_PASS=0 skips the second pass.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --with-browser --with-slurm
scripts/build.sh release
ctest --preset release -j "$(nproc)" "$@"
if [[ "${KTUNE_SANITIZE_PASS:-1}" != 0 ]]; then
  scripts/build.sh asan
  # halt_on_error: a UBSan report fails its test instead of scrolling past. The Python package's
  # tests and the install consumer load the libraries into processes that are not sanitized (python3,
  # a consumer built without -fsanitize), which an ASan library refuses; the C++ suites cover that code.
  # The PTX fingerprint (NVRTC compiles of every template sample, 3-6 minutes) checks generated code,
  # not host code, and runs in the first pass; so does the Slurm test (the sbatch script and the
  # scheduler around it: its ktune commands are the ones the CLI suites run under ASan).
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" ctest --preset asan -j "$(nproc)" -LE gpu \
    -E '^(ktune_python_tests|ktune_install_consumer|ktune_ptx_fingerprint_tests|ktune_slurm_array_e2e)$' "$@"
fi
