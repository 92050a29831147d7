#!/usr/bin/env bash
# scripts/slurm/ktune-sweep.sbatch under a real Slurm: starts munged, slurmctld and slurmd on
# loopback, entirely inside a temporary folder (its own slurm.conf, gres.conf, munge key, ports,
# state, spool and logs), submits a compile-only sweep as a 4-task job array plus the dependent
# merge job with `--submit`, waits for both, and checks: 4 shard databases, the merged database
# holds exactly the measurements of the same sweep run unsharded (each key once), and merging the
# shards again adds nothing. Every daemon it started is stopped and the folder removed on any exit.
#
# The node declares 4 GPUs as Slurm generic resources that are no devices, so the script's
# `--gres=gpu:1` schedules on a machine without GPUs: gres.conf names 4 links to /dev/null in the
# folder (Slurm 22.05's gres/gpu drops a GPU without File=, and wants a character device there);
# no job opens them, and no cgroup plugin is used (proctrack/linuxproc, task/none). Needs root (slurmd starts jobs as their user) and the Debian
# packages slurmctld, slurmd, slurm-client and munge: scripts/install-deps.sh --with-slurm.
#
# Usage: tests/slurm/slurm_array_test.sh KTUNE_BINARY SOURCE_DIR   (ctest passes both)
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 KTUNE_BINARY SOURCE_DIR" >&2
  exit 2
fi
ktune=$(realpath "$1")
src=$(realpath "$2")
export PATH="$PATH:/usr/sbin:/sbin"

log() { echo "slurm-test: $*"; }
fail() { echo "slurm-test: FAIL: $*" >&2; exit 1; }

missing=()
for cmd in munged munge unmunge slurmctld slurmd sbatch squeue scontrol scancel python3; do
  command -v "$cmd" >/dev/null || missing+=("$cmd")
done
if ((${#missing[@]})); then
  fail "not installed: ${missing[*]}; run scripts/install-deps.sh --with-slurm (it installs the" \
       "Debian packages slurmctld, slurmd, slurm-client and munge)"
fi
[[ $(id -u) -eq 0 ]] || fail "needs root: slurmd starts each job as its user (run it as root, as CI does)"
[[ -x "$ktune" ]] || fail "no ktune binary at $ktune"
[[ -d "$src/configs" && -f "$src/scripts/slurm/ktune-sweep.sbatch" ]] || fail "$src is not the ktune source tree"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktune-slurm-test.XXXXXX")
chmod 700 "$tmp"
conf=$tmp/etc/slurm.conf
pids=()  # daemons this test started, stopped in this order's reverse
jobs_submitted=()
status_printed=0

print_logs() {
  ((status_printed)) && return
  status_printed=1
  for f in "$tmp"/log/*.log "$tmp"/work/*.out "$tmp"/sweep/*.out; do
    [[ -f "$f" ]] || continue
    echo "----- $(basename "$f") (last 60 lines) -----" >&2
    tail -n 60 "$f" >&2
  done
}

# A process whose environment names this test's slurm.conf: a job's step daemon or its ktune.
pids_of_this_cluster() {
  local p
  for p in $(pgrep -x slurmstepd; pgrep -x ktune); do
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qxF "SLURM_CONF=$conf" && echo "$p"
  done
  return 0
}

stop_pid() {  # TERM, up to 10 s, then KILL
  local p=$1 i
  kill -0 "$p" 2>/dev/null || return 0
  kill -TERM "$p" 2>/dev/null || true
  for i in $(seq 50); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.2; done
  log "pid $p ignored SIGTERM for 10 s; SIGKILL"
  kill -KILL "$p" 2>/dev/null || true
}

cleanup() {
  local rc=$? p i
  trap - EXIT INT TERM
  set +e
  ((rc != 0)) && print_logs
  log "stopping the cluster"
  if ((${#jobs_submitted[@]})) && [[ -S "$tmp/munge/munge.socket" ]]; then
    timeout 10 scancel "${jobs_submitted[@]}" >/dev/null 2>&1
  fi
  if [[ -f "$conf" ]] && kill -0 "${pids[1]:-0}" 2>/dev/null; then
    timeout 10 scontrol shutdown >/dev/null 2>&1  # slurmctld and slurmd
    for i in $(seq 50); do
      kill -0 "${pids[1]}" 2>/dev/null || kill -0 "${pids[2]:-0}" 2>/dev/null || break
      sleep 0.2
    done
  fi
  for p in $(pids_of_this_cluster); do stop_pid "$p"; done
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[i]}"; done
  for f in "$tmp"/run/*.pid; do  # the daemons' own pid files, in case one forked
    [[ -f "$f" ]] && stop_pid "$(cat "$f")"
  done
  for p in "${pids[@]}" $(pids_of_this_cluster); do
    if kill -0 "$p" 2>/dev/null; then
      echo "slurm-test: FAIL: process $p is still running: $(tr '\0' ' ' <"/proc/$p/cmdline")" >&2
      rc=1
    fi
  done
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$tmp"/{etc,munge,run,log,state,spool,work,sweep}

# Two free TCP ports for slurmctld and slurmd (bound, then released; nothing else is listening).
read -r ctld_port slurmd_port < <(python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)
host=$(hostname -s)
cpus=$(nproc)
# The script asks for 16 CPUs a task (#SBATCH --cpus-per-task=16); a smaller machine's node claims
# 16 (SlurmdParameters=config_overrides) so the script runs as shipped, one task at a time.
((cpus < 16)) && cpus=16
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024 / 2) }' /proc/meminfo)

dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"

cat >"$conf" <<EOF
ClusterName=ktunetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$tmp/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
KillWait=5
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb Gres=gpu:4 State=UNKNOWN
PartitionName=ktune Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$tmp/dev"
for i in 0 1 2 3; do ln -s /dev/null "$tmp/dev/gpu$i"; done
echo "Name=gpu File=$tmp/dev/gpu[0-3]" >"$tmp/etc/gres.conf"
: >"$tmp/etc/plugstack.conf"
export SLURM_CONF=$conf

wait_for() {  # SECONDS WHAT COMMAND...: polls COMMAND every 0.5 s
  local secs=$1 what=$2 i
  shift 2
  for ((i = 0; i < secs * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  fail "$what within $secs s"
}
alive() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null || return 1; done; }

log "munged on $tmp/munge/munge.socket"
munged -F -f --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/seed" \
  >>"$tmp/log/munged.log" 2>&1 &
pids+=($!)
munge_ok() { munge -n -S "$tmp/munge/munge.socket" | unmunge -S "$tmp/munge/munge.socket"; }
wait_for 20 "munged answers" munge_ok

log "slurmctld on 127.0.0.1:$ctld_port (host $host), slurmd on port $slurmd_port; $cpus CPUs, 4 GPUs (gres, no devices)"
slurmctld -D -i -f "$conf" >>"$tmp/log/slurmctld.stdout.log" 2>&1 &
pids+=($!)
wait_for 30 "slurmctld answers (scontrol ping)" bash -c 'scontrol ping | grep -q UP'
slurmd -D -N "$host" -f "$conf" >>"$tmp/log/slurmd.stdout.log" 2>&1 &
pids+=($!)
node_idle() { alive "${pids[@]}" && scontrol show node "$host" | grep -q 'State=IDLE'; }
wait_for 30 "the node is IDLE (scontrol show node $host)" node_idle
log "cluster up: $(scontrol show node "$host" | grep -oE '(CPUTot|Gres)=[^ ]+' | tr '\n' ' ')"

# The sweep: one rmsnorm config over 4 shapes x 2 dtypes = 8 keys, compiled for sm_90, no GPU.
cat >"$tmp/work/one.toml" <<'EOF'
kernel = "rmsnorm"
dims = ["rows", "hidden"]
description = "one rmsnorm config (tests/slurm/slurm_array_test.sh)"
[[template]]
name = "rowwise"
layouts = [""]
[template.params]
THREADS = [256]
ROWS = [1]
VEC = [4]
REG = [0]
EOF
tune_args=(--kernel rmsnorm --space "$tmp/work/one.toml"
  --shape "rows=1,hidden=4096" --shape "rows=7,hidden=1024" --shape "rows=64,hidden=3584"
  --shape "rows=3,hidden=2048" --dtype "f32,f16" --compile-only --arch sm_90 --compile-threads 1)
export KTUNE="$ktune" KTUNE_CONFIGS_DIR="$src/configs"
export XDG_CACHE_HOME="$tmp/xdg-cache"  # the compile cache too: nothing outside the folder

cd "$tmp/work"  # the array tasks' #SBATCH --output files land here
log "submitting: ktune-sweep.sbatch --submit --shards 4 --out $tmp/sweep -- ${tune_args[*]}"
submit_out=$(timeout 30 bash "$src/scripts/slurm/ktune-sweep.sbatch" --submit --shards 4 --out "$tmp/sweep" \
  -- "${tune_args[@]}")
echo "$submit_out"
[[ "$submit_out" =~ array\ job\ ([0-9]+).*merge:\ job\ ([0-9]+) ]] || fail "could not read the job ids"
array_job=${BASH_REMATCH[1]}
merge_job=${BASH_REMATCH[2]}
jobs_submitted=("$array_job" "$merge_job")

log "waiting for array job $array_job and merge job $merge_job (at most 150 s)"
start=$SECONDS
while [[ -n "$(squeue -h -j "$array_job,$merge_job" -o %i 2>/dev/null)" ]] || ! squeue -h >/dev/null 2>&1; do
  ((SECONDS - start < 150)) || { squeue >&2; fail "the jobs did not finish within 150 s"; }
  alive "${pids[@]}" || fail "a daemon died"
  sleep 1
done
log "jobs done after $((SECONDS - start)) s"
array_states=$(scontrol show job "$array_job" | grep -oE '(JobState|ExitCode)=[^ ]+' | tr '\n' ' ')
log "array: $array_states"
n_ok=$(scontrol show job "$array_job" | grep -c 'JobState=COMPLETED' || true)
[[ "$n_ok" -eq 4 ]] || fail "$n_ok of 4 array tasks COMPLETED"
scontrol show job "$merge_job" | grep -q 'JobState=COMPLETED' || fail "merge job: $(scontrol show job "$merge_job" | grep -o 'JobState=[^ ]*')"
log "merge job COMPLETED: $(cat "$tmp"/sweep/merge-*.out 2>/dev/null | tr '\n' ' ')"

for i in 0 1 2 3; do
  [[ -s "$tmp/sweep/shard-$i.db" ]] || fail "no shard-$i.db"
done
[[ -s "$tmp/sweep/ktune.db" ]] || fail "no merged ktune.db"

log "the same sweep unsharded, without Slurm"
timeout 60 "$ktune" tune "${tune_args[@]}" --db "$tmp/unsharded.db" >"$tmp/log/unsharded.log" 2>&1 \
  || { cat "$tmp/log/unsharded.log" >&2; fail "the unsharded sweep failed"; }
for db in sweep/ktune.db unsharded.db sweep/shard-0.db sweep/shard-1.db sweep/shard-2.db sweep/shard-3.db; do
  "$ktune" cache export --db "$tmp/$db" --out "$tmp/$(basename "$db" .db).json" >/dev/null 2>&1 \
    || fail "ktune cache export --db $db"
done

# Keys: (kernel, shape, dtype, layout, config) of every measurement.
python3 - "$tmp" <<'EOF' || fail "the merged database does not hold the unsharded sweep's keys"
import collections, json, sys
d = sys.argv[1]
def keys(name):
    doc = json.load(open(f"{d}/{name}.json"))
    kernels = {k["id"]: k["name"] for k in doc["kernels"]}
    return collections.Counter((kernels[m["kernel_id"]], m["shape"], m["dtype"], m["layout"], m["config_name"])
                               for m in doc["measurements"])
merged, unsharded = keys("ktune"), keys("unsharded")
shards = [keys(f"shard-{i}") for i in range(4)]
print(f"slurm-test: {sum(unsharded.values())} keys unsharded, {sum(merged.values())} merged; "
      f"per shard: {[sum(s.values()) for s in shards]}")
ok = True
if len(unsharded) != 8 or max(unsharded.values()) != 1:
    print(f"slurm-test: the unsharded sweep has {len(unsharded)} keys, expected 8 once each"); ok = False
if merged != unsharded:
    print(f"slurm-test: merged and unsharded differ: only merged {merged - unsharded}, only unsharded {unsharded - merged}")
    ok = False
if sum(shards, collections.Counter()) != merged:
    print("slurm-test: the shards together are not the merged database (a key in two shards?)"); ok = False
if any(not s for s in shards):
    print("slurm-test: a shard tuned no key"); ok = False
sys.exit(0 if ok else 1)
EOF

log "merging the shards again"
again=$("$ktune" cache merge --db "$tmp/sweep/ktune.db" "$tmp"/sweep/shard-*.db --json 2>/dev/null)
added=$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["measurements_added"], d["best_updated"])' <<<"$again")
[[ "$added" == "0 0" ]] || fail "merging again added something (measurements_added, best_updated: $added)"

log "PASS: 4 shards under sbatch, the dependent merge holds the unsharded sweep's 8 keys once each," \
    "merging again adds nothing"
