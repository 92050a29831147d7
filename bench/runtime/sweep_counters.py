#!/usr/bin/env python3
"""What bound each key of a sweep: the winner, the best template and (where the kernel has library
candidates, gemm and fp8_gemm) the best cuBLASLt algorithm of every key in a sweep's database, with
the CUPTI counters the sweep read for them. Any kernel: a database may hold several.

The tuner re-times its best few candidates and reads their counters in a separate pass
(docs/measurement.md, step 7); this reads them back from `measurements`. For each of the three rows
it shows the median, DRAM bytes moved and the rate they imply over the counter pass's own duration,
SM throughput and achieved occupancy as % of peak, and a verdict of what bound it:
  memory    DRAM at >= 60 % of the peak given (--peak-tbs, H200 HBM3e: 4.8 TB/s),
  compute   SM throughput >= 60 %,
  latency   neither: the kernel is too short or has too few blocks to load the GPU (launch,
            pipeline fill, one partial wave).
A row the tuner did not re-time has no counters ("-").

    python3 bench/runtime/sweep_counters.py --db sweep.db [--out counters.md] [--peak-tbs 4.8]
"""

import argparse
import json
import pathlib
import sqlite3
import sys

BOUND_PCT = 60.0


def metric(counters, *names):
    values = counters.get("metrics", counters)
    for name in names:
        v = values.get(name)
        if isinstance(v, dict):
            v = v.get("value")
        if isinstance(v, (int, float)):
            return float(v)
    return None


def describe(row, peak_tbs):
    """(name, median, counters text, verdict) of one measurement row."""
    name, median, counters_text = row
    try:
        counters = json.loads(counters_text or "{}")
    except ValueError:
        counters = {}
    if not counters.get("available"):
        return name, median, "-", "-"
    rd = metric(counters, "dram__bytes_read.sum") or 0.0
    wr = metric(counters, "dram__bytes_write.sum") or 0.0
    ns = metric(counters, "gpu__time_duration.sum")
    sm = metric(counters, "sm__throughput.avg.pct_of_peak_sustained_elapsed")
    occ = metric(counters, "sm__warps_active.avg.pct_of_peak_sustained_active")
    tbs = (rd + wr) / ns / 1e3 if ns else None  # bytes per ns = GB/s; / 1e3 = TB/s
    dram_pct = 100.0 * tbs / peak_tbs if tbs is not None else None
    parts = [f"{(rd + wr) / 1e6:.1f} MB"]
    if tbs is not None:
        parts.append(f"{tbs:.2f} TB/s ({dram_pct:.0f} %)")
    if sm is not None:
        parts.append(f"SM {sm:.0f} %")
    if occ is not None:
        parts.append(f"occ {occ:.0f} %")
    if ns:
        parts.append(f"{ns / 1e3:.2f} us profiled")
    if dram_pct is not None and dram_pct >= BOUND_PCT:
        verdict = "memory"
    elif sm is not None and sm >= BOUND_PCT:
        verdict = "compute"
    else:
        verdict = "latency"
    return name, median, ", ".join(parts), verdict


def dims(shape):
    """The shape's values, for sorting ("m=16,n=1024" -> [16, 1024]; a non-number sorts as 0)."""
    out = []
    for part in shape.split(","):
        value = part.split("=", 1)[-1]
        out.append(int(value) if value.isdigit() else 0)
    return out


def key_rows(db, key, winner):
    """(winner, best template, best library or None, whether the key has library rows) of one key:
    key = (gpu_id, kernel_id, shape, dtype, layout)."""
    where = "gpu_id = ? AND kernel_id = ? AND shape = ? AND dtype = ? AND layout = ?"

    def best_of(clause, extra=()):
        """The fastest config matching `clause`: its re-timed row (with counters) when it has one."""
        name = db.execute(
            f"SELECT config_name FROM measurements WHERE {where} AND outcome = 'ok' AND median_us IS NOT NULL "
            f"AND baseline = '' AND {clause} GROUP BY config_name ORDER BY min(median_us) LIMIT 1",
            key + extra).fetchone()
        if name is None:
            return None
        return db.execute(
            f"SELECT config_name, median_us, counters_json FROM measurements WHERE {where} AND config_name = ? "
            "AND outcome = 'ok' AND median_us IS NOT NULL "
            "ORDER BY (counters_json LIKE '%\"available\":true%') DESC, id DESC LIMIT 1",
            key + (name[0],)).fetchone()

    has_library = db.execute(
        f"SELECT 1 FROM measurements WHERE {where} AND config_name LIKE '%.cublaslt.%' LIMIT 1", key).fetchone()
    lib = best_of("config_name LIKE '%.cublaslt.%'") if has_library else None
    tpl = best_of("config_name NOT LIKE '%.cublaslt.%'")
    win = best_of("config_name = ?", (winner,))
    return win, tpl, lib, bool(has_library)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the sweep's database")
    ap.add_argument("--out", help="Markdown file (default: stdout)")
    ap.add_argument("--peak-tbs", type=float, default=4.8, help="DRAM peak in TB/s (H200: 4.8)")
    args = ap.parse_args()

    if not pathlib.Path(args.db).is_file():
        ap.error(f"no database at {args.db} (did the sweep run?)")
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    keys = db.execute(
        "SELECT k.name, b.gpu_id, b.kernel_id, b.shape, b.dtype, b.layout, m.config_name FROM best b "
        "JOIN measurements m ON m.id = b.measurement_id JOIN kernels k ON k.id = b.kernel_id").fetchall()
    out = open(args.out, "w") if args.out else sys.stdout
    print("| kernel | shape | dtype, layout | row | config | median µs | counters | bound |", file=out)
    print("|---|---|---|---|---|---|---|---|", file=out)
    for kernel, gpu_id, kernel_id, shape, dtype, layout, winner in sorted(keys, key=lambda k: (k[0], dims(k[3]))):
        win, tpl, lib, has_library = key_rows(db, (gpu_id, kernel_id, shape, dtype, layout), winner)
        rows = [("winner", win), ("best template", tpl)] + ([("best cuBLASLt", lib)] if has_library else [])
        form = f"{dtype} {layout}".strip()
        for label, row in rows:
            if row is None:
                print(f"| {kernel} | {shape} | {form} | {label} | - | - | - | - |", file=out)
                continue
            name, median, text, verdict = describe(row, args.peak_tbs)
            print(f"| {kernel} | {shape} | {form} | {label} | {name} | {median:.2f} | {text} | {verdict} |", file=out)
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
