#!/usr/bin/env bash
# Installs the Debian packages ktune builds and tests with, when missing.
# Idempotent: runs apt-get (update once, then install) only for what is absent.
# Usage: scripts/install-deps.sh [--with-browser] [--with-slurm] [--with-fuzz]
#   --with-browser  also install chromium (the browser tests of the HTML report and of the service's
#                   dashboard)
#   --with-slurm    also install Slurm's controller, node daemon and client, and munge (the test that
#                   runs a single-host Slurm on loopback and sweeps under sbatch, tests/slurm/); the
#                   test starts its own daemons with its own configuration and stops them
#   --with-fuzz     also install clang 14 and libFuzzer (the fuzz preset, scripts/fuzz.sh)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libsqlite3-dev sqlite3 libfmt-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libtomlplusplus-dev libmuparser-dev libxxhash-dev
  libcpp-httplib-dev openssl libjs-chart.js python3 python3-pytest python3-setuptools python3-wheel python3-pip binutils
)
for arg in "$@"; do
  case "$arg" in
    --with-browser) packages+=(chromium) ;;
    --with-slurm) packages+=(slurmctld slurmd slurm-client munge) ;;
    --with-fuzz) packages+=(clang-14 libfuzzer-14-dev llvm-14) ;;  # llvm-14: llvm-symbolizer for traces
    *) echo "install-deps: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [[ ! -d /usr/local/cuda/include ]] && ! command -v nvcc >/dev/null; then
  echo "install-deps: warning: no CUDA toolkit found in /usr/local/cuda;" \
       "NVRTC/CUPTI parts need it (the cache, query and report parts do not)" >&2
fi
