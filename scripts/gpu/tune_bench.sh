#!/usr/bin/env bash
# tune_bench.sh [KTUNE_BIN] : the tuning loop's benchmarks on a GPU (issue 4).
#   1. one shape's exhaustive sweep (m=16,n=4096,k=4096 bf16 nt, the first $EXH_BUDGET configs in
#      enumeration order): wall time, configs/s, compile-wait vs measure share, with a cold compile
#      cache (fresh database) and a warm one (same database, --retune)
#   2. each strategy (random, halving, model) at $STRAT_BUDGET evaluations on the same shape, warm
#      compile cache: its winner's median vs the exhaustive winner's (gap %) and evaluations used
#   3. the gemm family (GEMV for M <= 16) at the Llama-3-8B decode shapes M = 1, 16, and cuBLAS
#      through `ktune bench --baseline cublas` when this build has it
# Writes raw JSON and summary.md (printed last) under $OUT (default ./tune-bench-out).
set -uo pipefail
KTUNE=${1:-${KTUNE_BIN:-$PWD/.devbin/ktune}}
OUT=${OUT:-$PWD/tune-bench-out}
EXH_BUDGET=${EXH_BUDGET:-150}
STRAT_BUDGET=${STRAT_BUDGET:-40}
TIMING=${TIMING:---max-time-ms 100}
mkdir -p "$OUT"
[ -x "$KTUNE" ] || { echo "tune_bench.sh: ktune binary '$KTUNE' not found (pass it or set KTUNE_BIN)" >&2; exit 2; }
export KTUNE_BIN=$KTUNE KTUNE_NO_PROGRESS=1
log=$OUT/tune_bench.log
: > "$log"
SHAPE=m=16,n=4096,k=4096

tune() {  # tune NAME DB ARGS... : one `ktune tune --json` into $OUT/NAME.json, wall seconds in NAME.wall
  local name=$1 db=$2; shift 2
  echo "+ ktune tune --db $db $*" >> "$log"
  local t0=$(date +%s.%N)
  "$KTUNE" tune --json --db "$db" "$@" $TIMING > "$OUT/$name.json" 2>> "$log" || echo "  (exit $? for $name)" >> "$log"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }' > "$OUT/$name.wall"
}

"$KTUNE" devices --json > "$OUT/devices.json" 2>> "$log"
rm -f "$OUT"/sweep.db*
tune exhaustive_cold "$OUT/sweep.db" --kernel gemm --shape $SHAPE --dtype bf16 --strategy exhaustive --budget "$EXH_BUDGET"
tune exhaustive_warm "$OUT/sweep.db" --kernel gemm --shape $SHAPE --dtype bf16 --strategy exhaustive --budget "$EXH_BUDGET" --retune

for s in random halving model; do
  rm -f "$OUT/$s.db"*
  cp "$OUT/sweep.db" "$OUT/$s.db"  # warm compile cache; --retune measures everything again
  tune "strategy_$s" "$OUT/$s.db" --kernel gemm --shape $SHAPE --dtype bf16 --strategy $s --budget "$STRAT_BUDGET" --retune
done

for m in 1 16; do
  for layer in "n=4096,k=4096" "n=14336,k=4096" "n=4096,k=14336"; do
    tune "decode_m${m}_${layer//[=,]/_}" "$OUT/sweep.db" --kernel gemm --shape "m=$m,$layer" --dtype bf16 --budget 32
    "$KTUNE" bench --json --kernel gemm --shape "m=$m,$layer" --dtype bf16 --best --baseline cublas --db "$OUT/sweep.db" \
      > "$OUT/cublas_m${m}_${layer//[=,]/_}.json" 2>> "$log" || echo "  (no cuBLAS baseline through ktune bench in this build)" >> "$log"
  done
done

python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import glob, json, os, sys
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name + ".json")) as f: return json.load(f)
    except Exception as e: return {"error": str(e)}
def wall(name):
    try: return float(open(os.path.join(out, name + ".wall")).read())
    except Exception: return float("nan")
def key(doc): return (doc.get("keys") or [{}])[0]
print("## Exhaustive sweep of gemm m=16,n=4096,k=4096 bf16 nt\n")
print("| compile cache | evaluations | wall s | configs/s | compile wait s | measure s | winner | median us |")
print("|---|---|---|---|---|---|---|---|")
for n in ["exhaustive_cold", "exhaustive_warm"]:
    k, w = key(load(n)), wall(n)
    ev = k.get("evaluations", 0)
    print(f"| {n.split('_')[1]} | {ev} | {w:.1f} | {ev / w if w == w and w else 0:.2f} | {k.get('compile_wait_s', 0):.1f} "
          f"| {k.get('measure_s', 0):.1f} | {k.get('winner')} | {k.get('median_us', float('nan')):.2f} |")
ref = key(load("exhaustive_warm")).get("median_us") or key(load("exhaustive_cold")).get("median_us")
print("\n## Strategies (same shape, warm compile cache)\n")
print("| strategy | evaluations | winner | median us | gap vs exhaustive % |")
print("|---|---|---|---|---|")
for s in ["random", "halving", "model"]:
    k = key(load("strategy_" + s))
    med = k.get("median_us")
    gap = 100 * (med / ref - 1) if med and ref else float("nan")
    print(f"| {s} | {k.get('evaluations')} | {k.get('winner')} | {med if med else float('nan'):.2f} | {gap:+.1f} |")
print("\n## Llama-3-8B decode shapes (bf16 nt)\n")
print("| shape | ktune winner | median us | cuBLAS us |")
print("|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(out, "decode_*.json"))):
    n = os.path.basename(f)[:-5]
    k = key(load(n))
    cb = load(n.replace("decode_", "cublas_"))
    cub = next((r.get("stats", {}).get("median") for r in cb.get("results", []) if "cublas" in r.get("name", "")), None)
    print(f"| {k.get('shape')} | {k.get('winner')} | {k.get('median_us', float('nan')):.2f} | {cub if cub else 'n/a'} |")
PY
