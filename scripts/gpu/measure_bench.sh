#!/usr/bin/env bash
# measure_bench.sh [KTUNE_BIN] : the measurement harness's benchmarks on a GPU (issue 3).
#   1. copy bandwidth through `ktune bench` at several sizes (and unroll 8 at the largest)
#   2. spread of the median over 5 repeated benches of one kernel (separate processes)
#   3. agreement of event timing with CUPTI Activity; CUPTI DRAM bytes against the bytes moved
#   4. the protocol's cost per candidate: parent-side wall time for a ~20 us and a ~1 ms kernel
# Writes every raw JSON and a summary table (summary.md, printed last) under $OUT (default ./measure-bench-out).
set -uo pipefail
KTUNE=${1:-${KTUNE_BIN:-$PWD/.devbin/ktune}}
OUT=${OUT:-$PWD/measure-bench-out}
mkdir -p "$OUT"
[ -x "$KTUNE" ] || { echo "measure_bench.sh: ktune binary '$KTUNE' not found (pass it or set KTUNE_BIN)" >&2; exit 2; }
export KTUNE_BIN=$KTUNE
log=$OUT/measure_bench.log
: > "$log"

bench() {  # bench NAME ARGS... : one `ktune bench --json` run into $OUT/NAME.json
  local name=$1; shift
  echo "+ ktune bench $*" >> "$log"
  "$KTUNE" bench --json "$@" > "$OUT/$name.json" 2>> "$log" || echo "  (exit $? for $name)" >> "$log"
}

"$KTUNE" devices --json > "$OUT/devices.json" 2>> "$log"

# 1. Copy bandwidth (f32): 4 MiB .. 2 GiB per buffer.
for n in 1048576 16777216 67108864 268435456 536870912; do
  bench "copy_n$n" --kernel copy --shape n=$n --dtype f32
done
bench copy_n536870912_u8 --kernel copy --shape n=536870912 --dtype f32 --config '{"unroll":8}'
bench copy_bf16_n268435456 --kernel copy --shape n=268435456 --dtype bf16

# 2. Spread of the median over 5 repeated benches (256 MiB per buffer, ~125 us).
for i in 1 2 3 4 5; do bench "repeat_$i" --kernel copy --shape n=67108864 --dtype f32; done

# 3. CUPTI: Activity timer vs events (~1 ms and ~40 us kernels); DRAM counters on a 4 GiB copy.
bench activity_1ms --kernel copy --shape n=536870912 --dtype f32 --activity-timer
bench activity_40us --kernel copy --shape n=16777216 --dtype f32 --activity-timer
bench counters_4g --kernel copy --shape n=1073741824 --dtype f32 --counters --max-time-ms 300

# 4. Protocol cost per candidate. With --baseline default the second candidate runs in the already
#    started worker, so its wall_ms is the steady-state cost (load, fill, verify, warm-up, timing).
bench cost_20us --kernel copy --shape n=11534336 --dtype f32 --config '{"unroll":8}' --baseline default
bench cost_1ms --kernel copy --shape n=536870912 --dtype f32 --config '{"unroll":8}' --baseline default

# Google Benchmark format, for compare.py.
"$KTUNE" bench --kernel copy --shape n=67108864 --format gbench > "$OUT/copy_gbench.json" 2>> "$log"

python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import json, os, statistics, sys
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.load(f)
    except Exception as e:
        return {"error": str(e)}
def res(doc, i=0):
    r = doc.get("results", [])
    return r[i] if len(r) > i else {}
def st(r, k):
    return r.get("stats", {}).get(k, float("nan"))

print("## Copy bandwidth (ktune bench, f32 unless noted)\n")
print("| case | bytes/buffer | median us | rse % | samples | batch | GB/s (read+write) | SM MHz | temp C | outcome |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for name in ["copy_n1048576", "copy_n16777216", "copy_n67108864", "copy_n268435456", "copy_n536870912",
             "copy_n536870912_u8", "copy_bf16_n268435456"]:
    d = load(name); r = res(d)
    print(f"| {name} | {d.get('shape','?')} | {st(r,'median_us'):.3f} | {100*(st(r,'rse_median') or 0):.3f} | "
          f"{st(r,'samples')} | {r.get('launches_per_sample','?')} | {r.get('gbps',0):.1f} | "
          f"{r.get('sm_clock_mhz','unknown')} | {r.get('temperature_c','unknown')} | {r.get('outcome', d.get('error'))} |")

print("\n## Spread of the median over 5 repeated benches (copy n=67108864 f32)\n")
meds = [st(res(load(f"repeat_{i}")), "median_us") for i in range(1, 6)]
good = [m for m in meds if m == m]
if good:
    spread = (max(good) - min(good)) / statistics.mean(good) * 100
    print("medians us: " + ", ".join(f"{m:.3f}" for m in meds))
    print(f"\nspread (max-min)/mean = {spread:.3f} % (goal <= 1 %)")

print("\n## CUPTI agreement\n")
print("| case | event median us | activity median us | diff % |")
print("|---|---:|---:|---:|")
for name in ["activity_1ms", "activity_40us"]:
    r = res(load(name)); a = r.get("activity_median_us"); m = st(r, "median_us")
    diff = (a / m - 1) * 100 if a else float("nan")
    print(f"| {name} | {m:.3f} | {a if a else r.get('counters',{}).get('activity_reason','n/a')} | {diff:+.3f} |")
r = res(load("counters_4g")); c = r.get("counters", {})
moved = 4.0 * 1073741824
if c.get("available"):
    m = c["metrics"]
    print(f"\nDRAM counters, 4 GiB copy: read {m.get('dram__bytes_read.sum',0):.4g} B ({m.get('dram__bytes_read.sum',0)/moved*100-100:+.3f} %), "
          f"write {m.get('dram__bytes_write.sum',0):.4g} B ({m.get('dram__bytes_write.sum',0)/moved*100-100:+.3f} %), "
          f"passes {c.get('passes')}, profiler {c.get('ms',0):.0f} ms")
    for k, v in m.items():
        print(f"- {k} = {v:.6g}")
else:
    print(f"\nDRAM counters unavailable: {c.get('reason')}")

print("\n## Protocol cost per candidate (parent-side wall time)\n")
print("| kernel | median us | first candidate ms (incl. worker start) | steady-state candidate ms | samples |")
print("|---|---:|---:|---:|---:|")
for name in ["cost_20us", "cost_1ms"]:
    d = load(name); a = res(d, 0); b = res(d, 1)
    print(f"| {name} | {st(b,'median_us'):.3f} | {a.get('wall_ms',0):.1f} | {b.get('wall_ms',0):.1f} | {st(b,'samples')} |")
PY
