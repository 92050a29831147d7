#!/usr/bin/env python3
"""Markdown tables for scripts/gpu/verify.sh, read from the files its parts wrote.

  verify_tables.py protocol DIR                           copy bandwidth, spread, CUPTI, cost a candidate
  verify_tables.py tuning DIR SHAPE DTYPE CONFIGS SPACE   exhaustive sweep, strategies, decode shapes
  verify_tables.py winners DIR                            the winner of each `ktune tune --json` in DIR
  verify_tables.py side-by-side DIR                       ktune vs torch (operators), vs cuBLASLt (GEMMs)
  verify_tables.py tune-keys DIR                          a key list tuned, benched at --best, served
"""
import csv
import glob
import json
import math
import os
import statistics
import sys

NAN = float("nan")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as e:  # a part that did not run or failed: the table says so
        return {"error": str(e)}


def result(doc, i=0):
    r = doc.get("results", [])
    return r[i] if len(r) > i else {}


def stat(r, k):
    v = r.get("stats", {}).get(k)
    return NAN if v is None else v


def protocol(d):
    j = lambda n: load(os.path.join(d, n + ".json"))
    print("## Copy bandwidth (ktune bench, f32 unless noted)\n")
    print("| case | median us | rse % | samples | batch | GB/s (read+write) | SM MHz | temp C | outcome |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for n in ["copy_n1048576", "copy_n16777216", "copy_n67108864", "copy_n268435456", "copy_n536870912",
              "copy_n536870912_u8", "copy_bf16_n268435456"]:
        doc = j(n)
        r = result(doc)
        print(f"| {n} | {stat(r, 'median_us'):.3f} | {100 * (stat(r, 'rse_median') or 0):.3f} | "
              f"{stat(r, 'samples')} | {r.get('launches_per_sample', '?')} | {r.get('gbps', 0):.1f} | "
              f"{r.get('sm_clock_mhz', 'unknown')} | {r.get('temperature_c', 'unknown')} | "
              f"{r.get('outcome', doc.get('error'))} |")
    print("\n## Spread of the median over 5 separate benches (copy n=67108864 f32)\n")
    meds = [stat(result(j(f"repeat_{i}")), "median_us") for i in range(1, 6)]
    good = [m for m in meds if m == m]
    if good:
        print("medians us: " + ", ".join(f"{m:.3f}" for m in meds))
        print(f"\nspread (max-min)/mean = {(max(good) - min(good)) / statistics.mean(good) * 100:.3f} %")
    print("\n## CUPTI Activity against events\n")
    print("| case | event median us | activity median us | diff % |")
    print("|---|---:|---:|---:|")
    for n in ["activity_1ms", "activity_40us"]:
        r = result(j(n))
        a, m = r.get("activity_median_us"), stat(r, "median_us")
        diff = (a / m - 1) * 100 if a else NAN
        print(f"| {n} | {m:.3f} | {a if a else r.get('counters', {}).get('activity_reason', 'n/a')} | {diff:+.3f} |")
    c = result(j("counters_4g")).get("counters", {})
    moved = 4.0 * 1073741824
    if c.get("available"):
        m = c["metrics"]
        rd, wr = m.get("dram__bytes_read.sum", 0), m.get("dram__bytes_write.sum", 0)
        print(f"\nDRAM counters, 4 GiB copy: read {rd:.4g} B ({rd / moved * 100 - 100:+.3f} %), write {wr:.4g} B "
              f"({wr / moved * 100 - 100:+.3f} %), passes {c.get('passes')}, profiler {c.get('ms', 0):.0f} ms")
    else:
        print(f"\nDRAM counters unavailable: {c.get('reason')}")
    print("\n## Cost a candidate (parent-side wall time)\n")
    print("| kernel | median us | first candidate ms (worker start included) | steady-state ms | samples |")
    print("|---|---:|---:|---:|---:|")
    for n in ["cost_20us", "cost_1ms"]:
        doc = j(n)
        a, b = result(doc, 0), result(doc, 1)
        print(f"| {n} | {stat(b, 'median_us'):.3f} | {a.get('wall_ms', 0):.1f} | {b.get('wall_ms', 0):.1f} | "
              f"{stat(b, 'samples')} |")


def first_key(doc):
    return (doc.get("keys") or [{}])[0]


def tuning(d, shape, dtype, configs, space):
    j = lambda n: load(os.path.join(d, n + ".json"))

    def wall(n):
        try:
            return float(open(os.path.join(d, n + ".wall")).read())
        except Exception:
            return NAN

    configs = int(configs)
    print(f"## Exhaustive sweep of gemm {shape} {dtype} nt ({configs} configs of {os.path.basename(space)})\n")
    print("| compile cache | evaluations | of the space | wall s | configs/s | compile wait s | measure s | outcomes "
          "| winner | median us |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in ["exhaustive_cold", "exhaustive_warm"]:
        k, w = first_key(j(n)), wall(n)
        ev = k.get("evaluations", 0)
        whole = "all" if ev == configs and not k.get("unmeasurable") else f"{ev}/{configs}"
        print(f"| {n.split('_')[1]} | {ev} | {whole} | {w:.1f} | {ev / w if w == w and w else 0:.2f} | "
              f"{k.get('compile_wait_s', 0):.1f} | {k.get('measure_s', 0):.1f} | {k.get('outcomes')} | "
              f"{k.get('winner')} | {k.get('median_us', NAN):.2f} |")
    ref = first_key(j("exhaustive_warm")).get("median_us") or first_key(j("exhaustive_cold")).get("median_us")
    print(f"\n## Strategies (same shape and space, warm compile cache) against the exhaustive best {ref}\n")
    print("| strategy | evaluations | winner | median us | gap % |")
    print("|---|---|---|---|---|")
    for s in ["random", "halving", "model"]:
        k = first_key(j("strategy_" + s))
        med = k.get("median_us")
        gap = 100 * (med / ref - 1) if med and ref else NAN
        print(f"| {s} | {k.get('evaluations')} | {k.get('winner')} | {med if med else NAN:.2f} | {gap:+.1f} |")
    print("\n## Llama-3-8B decode shapes (bf16 nt): budget 32, then `ktune bench --best --baseline cublas`\n")
    print("| shape | winner | sweep median us | bench: winner us | bench: cuBLAS us | speed-up |")
    print("|---|---|---|---|---|---|")
    for f in sorted(glob.glob(os.path.join(d, "decode_*.json"))):
        n = os.path.basename(f)[:-5]
        k = first_key(load(f))
        rows = [r for r in load(os.path.join(d, n.replace("decode_", "cublas_") + ".json")).get("results", [])
                if r.get("stats")]
        cub = next((r["stats"]["median_us"] for r in rows if r.get("baseline") == "cublas"), None)
        own = next((r["stats"]["median_us"] for r in rows if r.get("baseline") != "cublas"), None)
        fmt = lambda v: f"{v:.2f}" if v else "n/a"
        ratio = f"{cub / own:.2f}x" if cub and own else "n/a"
        print(f"| {k.get('shape')} | {k.get('winner')} | {k.get('median_us', NAN):.2f} | {fmt(own)} | {fmt(cub)} "
              f"| {ratio} |")


def winners(d):
    print("| sweep | kernel | shape | evaluations | winner | median us |")
    print("|---|---|---|---|---|---|")
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        for k in load(f).get("keys", []):
            print(f"| {os.path.basename(f)[:-5]} | {k.get('kernel')} | {k.get('shape')} | {k.get('evaluations')} | "
                  f"{k.get('winner')} | {k.get('median_us', NAN):.2f} |")


def ops_best(path):
    """(op, mode, shape) -> (median us, GB/s, config) of the fastest verified row of a ktune_ops_bench CSV."""
    best = {}
    try:
        rows = list(csv.DictReader(open(path)))
    except Exception:
        return best
    for r in rows:
        if r.get("verified", "1") not in ("1", "true", "yes"):
            continue
        key = (r["op"], r["mode"] or "", r["shape"])
        us = float(r["median_us"])
        if key not in best or us < best[key][0]:
            best[key] = (us, float(r["gbps"]), r["config"])
    return best


def torch_rows(path):
    """(op, mode, shape) -> (median us, GB/s) from ops_torch_baseline.py's output."""
    rows = {}
    try:
        lines = open(path).read().splitlines()
    except Exception:
        return rows
    for line in lines:
        if " us " not in line or "GB/s" not in line:
            continue
        label, rest = line.split(" us ", 1)[0], line
        words = label.split()
        shape = next((w for w in words if "=" in w), None)
        if shape is None or len(words) < 3:
            continue
        op, mode, us = words[0], " ".join(w for w in words[1:-1] if "=" not in w), float(words[-1])
        gbs = float(rest.split(" us ", 1)[1].split()[0])
        rows[(op, mode, shape)] = (us, gbs)
    return rows


def side_by_side(d):
    print("## Operators: ktune against torch (bf16, same flush, median us; lower is better)\n")
    print("| flush | run | op | mode | shape | ktune us | ktune GB/s | torch us | torch GB/s | torch / ktune | ktune config |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---|")
    for path in sorted(glob.glob(os.path.join(d, "side", "ops-*.csv"))):
        flush, run = os.path.basename(path)[4:-4].split("-")
        ours = ops_best(path)
        theirs = torch_rows(os.path.join(d, "side", f"torch-{flush}-{run}.txt"))
        for key, (us, gbs, cfg) in sorted(ours.items()):
            t = theirs.get(key)
            torch = f"{t[0]:.2f} | {t[1]:.0f} | {t[0] / us:.2f}x" if t else "- | - | -"
            print(f"| {flush} | {run} | {key[0]} | {key[1]} | {key[2]} | {us:.2f} | {gbs:.0f} | {torch} | {cfg} |")
    for name, lib in [("gemm", "cublas"), ("fp8", "cublaslt")]:
        paths = sorted(glob.glob(os.path.join(d, "benches", "**", name + ".csv"), recursive=True))
        if not paths:
            continue
        print(f"\n## {name}: ktune's best config against {lib} (us; speed-up = {lib} / ktune)\n")
        print("| run | shape | m | n | k | library us | ktune us | TFLOP/s | speed-up | ktune config |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for path in paths:
            run = os.path.basename(os.path.dirname(path))
            shapes = {}
            for r in csv.DictReader(open(path)):
                s = shapes.setdefault(r["shape"], {"dims": (r["m"], r["n"], r["k"]), "lib": None, "own": None})
                if r.get("ok", "1") != "1":
                    continue
                us = float(r["us"])
                if r["impl"].startswith("cublas"):
                    s["lib"] = us
                elif s["own"] is None or us < s["own"][0]:
                    s["own"] = (us, float(r["tflops"]), r["config"])
            ratios = {}
            for shape, s in shapes.items():
                if not s["lib"] or not s["own"]:
                    continue
                ratio = s["lib"] / s["own"][0]
                ratios.setdefault(int(s["dims"][0]), []).append(ratio)
                m, n, k = s["dims"]
                print(f"| {run} | {shape} | {m} | {n} | {k} | {s['lib']:.2f} | {s['own'][0]:.2f} | {s['own'][1]:.0f} | "
                      f"{ratio:.2f}x | {s['own'][2]} |")
            for m, rs in sorted(ratios.items()):
                geo = math.exp(sum(math.log(x) for x in rs) / len(rs))
                print(f"\n{run}: geomean speed-up at M = {m}: {geo:.3f} ({len(rs)} shapes)")


def json_tail(path):
    """The last JSON document of a log that also holds stderr lines (`ktune tune --json`)."""
    try:
        text = open(path).read()
    except OSError as e:
        return {"error": str(e)}
    start = text.rfind("\n{")
    try:
        return json.loads(text[start + 1 if start >= 0 else 0:])
    except ValueError as e:
        return {"error": str(e)}


def tune_keys(d):
    keys = [l.split() for l in open(os.path.join(d, "keys.txt")) if l.strip() and not l.startswith("#")]
    first, again = json_tail(os.path.join(d, "tune.log")), json_tail(os.path.join(d, "again.log"))
    tuned = {(k.get("kernel"), k.get("shape"), k.get("dtype"), k.get("layout")): k for k in first.get("keys", [])}
    print("| key | winner | kind | bench µs | cuBLAS µs | speed-up | served |")
    print("|---|---|---|---|---|---|---|")
    served = 0
    for i, k in enumerate(keys, 1):
        b = load(os.path.join(d, f"bench-{i}.json"))
        q = load(os.path.join(d, f"query-{i}.json"))
        rows = b.get("results", [])
        own = next((r for r in rows if r.get("role") == "config"), {})
        blas = next((r for r in rows if r.get("baseline") == "cublas"), {})
        ok = "error" not in q and bool(q)
        served += ok
        med = stat(own, "median_us")
        cub = stat(blas, "median_us")
        sp = own.get("speedup") or (cub / med if med == med and cub == cub and med > 0 else NAN)
        num = lambda v, unit="": "—" if v != v else f"{v:.2f}{unit}"  # NaN: no such row
        print(f"| {' '.join(k)} | {own.get('name', b.get('error', '-'))} | {b.get('config_kind', '-')} | {num(med)} "
              f"| {num(cub)} | {num(sp, 'x')} | {'yes' if ok else 'no'} |")
    measured_again = sum(k.get("measured", 0) for k in again.get("keys", []))
    print(f"\n{len(tuned)} of {len(keys)} keys in the first tune's summary; {served} served by `ktune query`; "
          f"the second tune measured {measured_again} candidates.")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"protocol": protocol, "tuning": tuning, "winners": winners, "side-by-side": side_by_side,
     "tune-keys": tune_keys}[cmd](*args)


if __name__ == "__main__":
    main()
