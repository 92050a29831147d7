#!/usr/bin/env bash
# Installs the Debian packages ktune builds and tests with, when missing, then makes the project's
# Python environment: .venv (--system-site-packages, over Debian's python3) from requirements.txt.
# Idempotent: runs apt-get (update once, then install) only for what is absent, and pip only when
# .venv is missing or requirements.txt changed since it was made.
# Usage: scripts/install-deps.sh [--with-browser] [--with-slurm] [--with-fuzz] [--with-torch]
#   --with-browser  also install chromium (the browser tests of the HTML report and of the service's
#                   dashboard)
#   --with-slurm    also install Slurm's controller, node daemon and client, and munge (the test that
#                   runs a single-host Slurm on loopback and sweeps under sbatch, tests/slurm/); the
#                   test starts its own daemons with its own configuration and stops them
#   --with-fuzz     also install clang 14 and libFuzzer (the fuzz preset, scripts/fuzz.sh)
#   --with-torch    also add torch and transformers to .venv from requirements-torch.txt (about 2 GB;
#                   the torch integration's tests then run here on the CPU, in ktune_python_tests)
set -euo pipefail

with_torch=0
packages=(
  build-essential cmake ninja-build pkg-config
  libsqlite3-dev sqlite3 libfmt-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libtomlplusplus-dev libmuparser-dev libxxhash-dev
  libcpp-httplib-dev libmicrohttpd-dev openssl libjs-chart.js python3 python3-venv python3-pip binutils
)
for arg in "$@"; do
  case "$arg" in
    --with-browser) packages+=(chromium) ;;
    --with-slurm) packages+=(slurmctld slurmd slurm-client munge) ;;
    --with-fuzz) packages+=(clang-14 libfuzzer-14-dev llvm-14) ;;  # llvm-14: llvm-symbolizer for traces
    --with-torch) with_torch=1 ;;
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

# The project's Python environment. Debian's python3 (not the first python3 on PATH, which may be
# another interpreter): the system packages it sees are Debian's.
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
# pip_install FILE [PIP ARGS]: installs the requirements file FILE into .venv unless .venv holds it
# already (a stamp of FILE's hash in .venv, gone when .venv is made anew); a new .venv first when
# FILE is requirements.txt.
pip_install() {
  local file="$1" stamp="$venv/.$1.sha256" want
  shift
  want="$(sha256sum "$root/$file" | cut -d' ' -f1)"
  if [[ -x $venv/bin/python && -f $stamp && "$(cat "$stamp")" == "$want" ]]; then
    echo "install-deps: $venv has $file"
    return
  fi
  echo "install-deps: installing $file into $venv"
  if [[ $file == requirements.txt ]]; then /usr/bin/python3 -m venv --system-site-packages --clear "$venv"; fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" -r "$root/$file"
  echo "$want" > "$stamp"
}
pip_install requirements.txt
# --no-deps: the file lists every package (torch's CUDA wheel would otherwise pull all of CUDA's)
if ((with_torch)); then pip_install requirements-torch.txt --no-deps; fi

if [[ ! -d /usr/local/cuda/include ]] && ! command -v nvcc >/dev/null; then
  echo "install-deps: warning: no CUDA toolkit found in /usr/local/cuda;" \
       "NVRTC/CUPTI parts need it (the cache, query and report parts do not)" >&2
fi
