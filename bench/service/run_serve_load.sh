#!/usr/bin/env bash
# Load benchmark of `ktune serve` (docs/perf/service.md): starts a server on a copy of DB, runs
# ktune_serve_load closed loop with 1, 16 and 64 keep-alive clients and open loop with 64 clients at
# each of RATES lookups/s offered (a comma list, default 20000), plus the C ABI for the ratio; then
# all of it again while a compile-only softmax job (one compile thread, four shapes: minutes of
# compiling) writes to the same database; then the closed-loop rows again with 500 slow-loris
# connections (one header byte, then nothing) and 500 event streams of that job held open. Not a kernel the lookups ask for: a job registers its
# kernel's current template hash, which makes the fixture's results of that kernel stale (404).
#   bench/service/run_serve_load.sh BUILD_DIR DB GPU_NAME [RATES]
# Environment: KTUNE_SERVE_ARGS, more arguments of `ktune serve` (e.g. "--threads 16");
# KTUNE_SERVE_LOAD_IDLE_ONLY=1, only the idle server's rows.
set -euo pipefail
build=${1:?build dir}; db=${2:?database}; gpu=${3:?GPU name}; rates=${4:-20000}
work=$(mktemp -d); trap 'kill "${pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 -c "import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d)" "$db" "$work/db"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"; chmod 600 "$work/token"
"$build/cli/ktune" serve --listen 127.0.0.1:0 --db "$work/db" --token-file "$work/token" --devices none \
  ${KTUNE_SERVE_ARGS:-} >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 50); do grep -q "listening on" "$work/out" && break; sleep 0.1; done
url=$(sed 's/.*listening on \([^ ]*\).*/\1/' "$work/out")
keys=(--key gemm m=16,n=4096,k=4096 bf16 nt --key gemm m=512,n=4096,k=4096 bf16 nt
      --key gemm m=16,n=4096,k=4096 bf16 nn --key rmsnorm rows=16,hidden=4096 f16 "")
load=("$build/bench/service/ktune_serve_load" --url "$url" --gpu "$gpu" --seconds 4 "${keys[@]}")
echo "== lookups, idle server${KTUNE_SERVE_ARGS:+ (serve ${KTUNE_SERVE_ARGS})}"
"${load[@]}" --clients 1,16,64
for rate in ${rates//,/ }; do "${load[@]}" --clients 64 --rate "$rate"; done
"${load[@]}" --db "$work/db" --clients 1 | tail -1
[ "${KTUNE_SERVE_LOAD_IDLE_ONLY:-0}" = 1 ] && exit 0
echo "== lookups while a compile-only job writes"
job=$(curl -s -X POST -H "Authorization: Bearer $(cat "$work/token")" \
  -d '{"kernel":"softmax","shapes":["rows=16,cols=4096","rows=64,cols=4096","rows=16,cols=8192","rows=64,cols=8192"],"dtype":"bf16","compile_only":true,"arch":"sm_90","strategy":"exhaustive"}' \
  "$url/v1/jobs" | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
sleep 2
"${load[@]}" --clients 1,16,64
for rate in ${rates//,/ }; do "${load[@]}" --clients 64 --rate "$rate"; done
# The job must have been writing all along: still running, with evaluations stored as it went.
curl -s "$url/v1/jobs/$job" | python3 -c "import json,sys; j=json.load(sys.stdin); print('job', j['id'], j['state'], j['progress'].get('evaluations'), '/', j['progress'].get('evaluations_planned'), 'evaluations')"
echo "== lookups while 500 slow-loris connections and 500 event streams are held open"
python3 - "$url" "$job" 500 > "$work/hold" <<'PY' &
import resource, socket, sys, time, urllib.parse
url, job, n = urllib.parse.urlparse(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * n + 64), hard))
held = []
for _ in range(n):
    c = socket.create_connection((url.hostname, url.port))
    c.sendall(b"G")
    held.append(c)
    c = socket.create_connection((url.hostname, url.port))
    c.sendall(b"GET /v1/jobs/%d/events HTTP/1.1\r\nHost: x\r\n\r\n" % job)
    held.append(c)
print(len(held), flush=True)
time.sleep(600)
PY
hold=$!
for _ in $(seq 100); do [ -s "$work/hold" ] && break; sleep 0.1; done
echo "held $(cat "$work/hold") connections"
"${load[@]}" --clients 1,16,64
kill "$hold"
