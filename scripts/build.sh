#!/usr/bin/env bash
# Configures and builds ktune (Release by default) into build/<preset>: every target of the
# preset, or only the TARGETs given (and what they need).
# Usage: scripts/build.sh [release|debug|asan] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
targets=()
(($# > 0)) && targets=(--target "$@")
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" "${targets[@]}"
