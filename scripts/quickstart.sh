#!/usr/bin/env bash
# The main job: installs what is missing, builds the ktune binary and what it needs (not the test
# suites), runs a quick tuning sweep on GPU 0 and writes a report. Without a GPU it says so,
# compiles every candidate of the sweep with NVRTC for sm_90 instead (--compile-only) and reports
# what it can.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release ktune
ktune=build/release/cli/ktune
export KTUNE_DB="${KTUNE_DB:-$PWD/build/quickstart.db}"
mkdir -p build/reports

gpu=""
if "$ktune" devices; then
  gpu=0
  "$ktune" tune --preset quick --device 0
else
  echo "quickstart: no usable GPU (see the message above); running the compile-only part of the sweep" >&2
  "$ktune" tune --preset quick --compile-only --arch sm_90
fi
"$ktune" report --format html --out build/reports/quick.html
"$ktune" report --format md --out build/reports/quick.md
cat build/reports/quick.md
echo "quickstart: database $KTUNE_DB; report build/reports/quick.html" >&2
if [[ -z $gpu ]]; then
  # What a measured sweep reports: the shipped sample of an H200's quick sweep, rendered the same way.
  sample_db=build/h200-quick-sample.db
  rm -f "$sample_db"
  "$ktune" cache import examples/h200-quick-sample.json --db "$sample_db" > /dev/null
  "$ktune" report --db "$sample_db" --format html --out build/reports/h200-quick-sample.html
  echo "quickstart: a measured sweep's report (an H200's, shipped): build/reports/h200-quick-sample.html" >&2
fi
