#!/usr/bin/env bash
# tune_bench.sh [KTUNE_BIN] : the tuning loop's benchmarks on a GPU (issue 4).
#   0. the size of $SHAPE's whole config space in $SPACE, counted with `--compile-only --budget 1`
#      (split-K configs included: the harness times a plan's whole launch sequence); the script
#      stops when it exceeds $EXH_MAX (a true exhaustive sweep must fit the device call)
#   1. that shape's TRUE exhaustive sweep (every config the space keeps, no budget): wall time,
#      configs/s, compile-wait vs measure share, with a cold compile cache (fresh database) and a
#      warm one (same database, --retune)
#   2. each strategy (random, halving, model) at $STRAT_BUDGET evaluations over the same space and
#      shape, warm compile cache: its winner's re-timed median vs the exhaustive winner's (gap %)
#   3. the gemm family (default space) at the Llama-3-8B decode shapes M = 1, 16, and cuBLAS
#      through `ktune bench --baseline cublas` when this build has it
# Writes raw JSON and summary.md (printed last) under $OUT (default ./tune-bench-out).
#
# $SPACE defaults to tune_bench_space.toml beside this script: the default gemm space narrowed to
# decode-relevant values, 375 configs at m=16,n=4096,k=4096 bf16 nt (tiled 96, gemv 99, mma 180;
# 288 of them split-K). The default space holds ~2980 configs at that shape: SPACE=configs/spaces/
# gemm.toml runs that true exhaustive sweep too, but needs ~8-10 minutes (mostly NVRTC).
# Device time, H200, defaults: ~65 ms a measured candidate at --max-time-ms 100 (docs/perf/
# 2026-11-29-tuner-h200.md), 16 NVRTC threads at ~15 configs/s: exhaustive cold ~35 s, warm ~25 s,
# strategies 3 x 40 ~10 s, decode shapes 6 x 32 ~30 s + cuBLAS benches ~15 s, worker starts: about
# 2.5 minutes, under the 6-minute target even at twice the estimate.
set -uo pipefail
KTUNE=${1:-${KTUNE_BIN:-$PWD/.devbin/ktune}}
OUT=${OUT:-$PWD/tune-bench-out}
SHAPE=${SHAPE:-m=16,n=4096,k=4096}
DTYPE=${DTYPE:-bf16}
SPACE=${SPACE:-$(cd "$(dirname "$0")" && pwd)/tune_bench_space.toml}
EXH_MAX=${EXH_MAX:-1500}
STRAT_BUDGET=${STRAT_BUDGET:-40}
TIMING=${TIMING:---max-time-ms 100}
mkdir -p "$OUT"
[ -x "$KTUNE" ] || { echo "tune_bench.sh: ktune binary '$KTUNE' not found (pass it or set KTUNE_BIN)" >&2; exit 2; }
export KTUNE_BIN=$KTUNE KTUNE_NO_PROGRESS=1
log=$OUT/tune_bench.log
: > "$log"

tune() {  # tune NAME DB ARGS... : one `ktune tune --json` into $OUT/NAME.json, wall seconds in NAME.wall
  local name=$1 db=$2; shift 2
  echo "+ ktune tune --db $db $*" >> "$log"
  local t0=$(date +%s.%N)
  "$KTUNE" tune --json --db "$db" "$@" $TIMING > "$OUT/$name.json" 2>> "$log" || echo "  (exit $? for $name)" >> "$log"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }' > "$OUT/$name.wall"
}

"$KTUNE" devices --json > "$OUT/devices.json" 2>> "$log"
arch=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d.get("devices",d); d=d[0] if isinstance(d,list) else d; print(d.get("arch") or "sm_%s%s" % (d.get("cc_major",9), d.get("cc_minor",0)))' "$OUT/devices.json" 2>/dev/null || echo sm_90)
rm -f "$OUT"/count.db*
"$KTUNE" tune --json --db "$OUT/count.db" --kernel gemm --space "$SPACE" --shape "$SHAPE" --dtype "$DTYPE" --compile-only --arch "$arch" \
  --budget 1 > "$OUT/count.json" 2>> "$log"
configs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keys"][0]["candidates"])' "$OUT/count.json" 2>/dev/null || echo 0)
echo "gemm $SHAPE $DTYPE: $configs configs in the whole of $SPACE ($arch)" | tee -a "$log"
if [ "$configs" -le 0 ] || [ "$configs" -gt "$EXH_MAX" ]; then
  echo "tune_bench.sh: $configs configs is not a sweep to run exhaustively here (EXH_MAX=$EXH_MAX); pick another SHAPE" >&2
  exit 2
fi

rm -f "$OUT"/sweep.db*
exh=(--kernel gemm --space "$SPACE" --shape "$SHAPE" --dtype "$DTYPE")
tune exhaustive_cold "$OUT/sweep.db" "${exh[@]}" --strategy exhaustive --budget 0
tune exhaustive_warm "$OUT/sweep.db" "${exh[@]}" --strategy exhaustive --budget 0 --retune

for s in random halving model; do
  rm -f "$OUT/$s.db"*
  cp "$OUT/sweep.db" "$OUT/$s.db"  # warm compile cache; --retune measures everything again
  tune "strategy_$s" "$OUT/$s.db" "${exh[@]}" --strategy $s --budget "$STRAT_BUDGET" --retune
done

for m in 1 16; do
  for layer in "n=4096,k=4096" "n=14336,k=4096" "n=4096,k=14336"; do
    tune "decode_m${m}_${layer//[=,]/_}" "$OUT/sweep.db" --kernel gemm --shape "m=$m,$layer" --dtype bf16 --budget 32
    "$KTUNE" bench --json --kernel gemm --shape "m=$m,$layer" --dtype bf16 --best --baseline cublas --db "$OUT/sweep.db" \
      > "$OUT/cublas_m${m}_${layer//[=,]/_}.json" 2>> "$log" || echo "  (no cuBLAS baseline through ktune bench in this build)" >> "$log"
  done
done

python3 - "$OUT" "$SHAPE" "$DTYPE" "$configs" "$SPACE" <<'PY' | tee "$OUT/summary.md"
import glob, json, os, sys
out, shape, dtype, configs, space = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
def load(name):
    try:
        with open(os.path.join(out, name + ".json")) as f: return json.load(f)
    except Exception as e: return {"error": str(e)}
def wall(name):
    try: return float(open(os.path.join(out, name + ".wall")).read())
    except Exception: return float("nan")
def key(doc): return (doc.get("keys") or [{}])[0]
print(f"## True exhaustive sweep of gemm {shape} {dtype} nt ({configs} configs of {os.path.basename(space)}, split-K included)\n")
print("| compile cache | evaluations | of the space | wall s | configs/s | compile wait s | measure s | outcomes | winner | median us |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in ["exhaustive_cold", "exhaustive_warm"]:
    k, w = key(load(n)), wall(n)
    ev = k.get("evaluations", 0)
    whole = "all" if ev == configs and not k.get("unmeasurable") else f"{ev}/{configs}"
    print(f"| {n.split('_')[1]} | {ev} | {whole} | {w:.1f} | {ev / w if w == w and w else 0:.2f} | {k.get('compile_wait_s', 0):.1f} "
          f"| {k.get('measure_s', 0):.1f} | {k.get('outcomes')} | {k.get('winner')} | {k.get('median_us', float('nan')):.2f} |")
ref = key(load("exhaustive_warm")).get("median_us") or key(load("exhaustive_cold")).get("median_us")
print(f"\n## Strategies (same shape, warm compile cache) vs the exhaustive best {ref}\n")
print("| strategy | evaluations | winner | median us | gap vs exhaustive % |")
print("|---|---|---|---|---|")
for s in ["random", "halving", "model"]:
    k = key(load("strategy_" + s))
    med = k.get("median_us")
    gap = 100 * (med / ref - 1) if med and ref else float("nan")
    print(f"| {s} | {k.get('evaluations')} | {k.get('winner')} | {med if med else float('nan'):.2f} | {gap:+.1f} |")
print("\n## Llama-3-8B decode shapes (bf16 nt)\n")
print("| shape | ktune winner | sweep median us | bench: winner us | bench: cuBLAS us | speed-up |")
print("|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(out, "decode_*.json"))):
    n = os.path.basename(f)[:-5]
    k = key(load(n))
    cb = load(n.replace("decode_", "cublas_"))
    rows = [r for r in cb.get("results", []) if r.get("stats")]
    cub = next((r["stats"]["median_us"] for r in rows if r.get("baseline") == "cublas"), None)
    own = next((r["stats"]["median_us"] for r in rows if r.get("baseline") != "cublas"), None)
    fmt = lambda v: f"{v:.2f}" if v else "n/a"
    ratio = f"{cub / own:.2f}x" if cub and own else "n/a"
    print(f"| {k.get('shape')} | {k.get('winner')} | {k.get('median_us', float('nan')):.2f} | {fmt(own)} | {fmt(cub)} | {ratio} |")
PY
