#!/usr/bin/env python3
"""What bound each key of a GEMM sweep: the winner, the best template and the best cuBLASLt algorithm
of every key in a sweep's database, with the CUPTI counters the sweep read for them.

The tuner re-times its best few candidates and reads their counters in a separate pass
(docs/measurement.md, step 7); this reads them back from `measurements`. For each of the three rows
it shows the median, DRAM bytes moved and the rate they imply over the counter pass's own duration,
SM throughput and achieved occupancy as % of peak, and a verdict of what bound it:
  memory    DRAM at >= 60 % of the peak given (--peak-tbs, H200 HBM3e: 4.8 TB/s),
  compute   SM throughput >= 60 %,
  latency   neither: the kernel is too short or has too few blocks to load the GPU (launch,
            pipeline fill, one partial wave).
A row the tuner did not re-time has no counters ("-").

    python3 bench/runtime/gemm_counters.py --db sweep.db [--out counters.md] [--peak-tbs 4.8]
"""

import argparse
import json
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


def short(name):
    return name.split(".", 3)[-1] if name else "-"


def dims(shape):
    return [int(p.split("=")[1]) for p in shape.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the sweep's database")
    ap.add_argument("--out", help="Markdown file (default: stdout)")
    ap.add_argument("--peak-tbs", type=float, default=4.8, help="DRAM peak in TB/s (H200: 4.8)")
    args = ap.parse_args()

    db = sqlite3.connect(args.db)
    keys = db.execute(
        "SELECT b.shape, b.dtype, b.layout, m.config_name FROM best b "
        "JOIN measurements m ON m.id = b.measurement_id").fetchall()
    rows = []
    for shape, dtype, layout, winner in sorted(keys, key=lambda k: dims(k[0])):
        def best_of(clause):
            """The fastest config matching `clause`: its re-timed row (with counters) when it has one."""
            name = db.execute(
                "SELECT config_name FROM measurements WHERE shape = ? AND dtype = ? AND layout = ? "
                f"AND outcome = 'ok' AND median_us IS NOT NULL AND baseline = '' AND {clause} "
                "GROUP BY config_name ORDER BY min(median_us) LIMIT 1", (shape, dtype, layout)).fetchone()
            if name is None:
                return None
            return db.execute(
                "SELECT config_name, median_us, counters_json FROM measurements WHERE shape = ? AND dtype = ? "
                "AND layout = ? AND config_name = ? AND outcome = 'ok' AND median_us IS NOT NULL "
                "ORDER BY (counters_json LIKE '%\"available\":true%') DESC, id DESC LIMIT 1",
                (shape, dtype, layout, name[0])).fetchone()

        lib = best_of("config_name LIKE '%.cublaslt.%'")
        tpl = best_of("config_name NOT LIKE '%.cublaslt.%'")
        win = best_of("config_name = '" + winner.replace("'", "''") + "'")
        rows.append((shape, dtype, layout, win, tpl, lib))

    out = open(args.out, "w") if args.out else sys.stdout
    print("| shape | row | config | median µs | counters | bound |", file=out)
    print("|---|---|---|---|---|---|", file=out)
    for shape, dtype, layout, win, tpl, lib in rows:
        for label, row in (("winner", win), ("best template", tpl), ("best cuBLASLt", lib)):
            if row is None:
                print(f"| {shape} | {label} | - | - | - | - |", file=out)
                continue
            name, median, text, verdict = describe(row, args.peak_tbs)
            print(f"| {shape} | {label} | {short(name)} | {median:.2f} | {text} | {verdict} |", file=out)
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
