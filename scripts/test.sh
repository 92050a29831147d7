#!/usr/bin/env bash
# Installs what is missing, builds ktune and runs every test suite with ctest.
# Labels: unit (no CUDA), nvrtc (toolkit, no GPU), e2e (the ktune binary), gpu (skips
# with its reason when there is no device). Extra arguments go to ctest, e.g. -L unit.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --with-browser
scripts/build.sh release
ctest --preset release -j "$(nproc)" "$@"
