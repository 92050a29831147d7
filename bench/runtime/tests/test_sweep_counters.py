"""bench/runtime/sweep_counters.py on a sweep database made here with random values: for every key it
names the winner, the fastest template and (for a kernel with library candidates) the fastest
cuBLASLt algorithm, reads the counters of their re-timed rows, and judges what bound each as its
rules say (checked against values computed here from the same random numbers)."""

import json
import pathlib
import random
import sqlite3
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "sweep_counters.py"
PEAK_TBS = 4.8
# The columns of docs/schema.md's kernels, measurements and best tables the script reads.
SCHEMA = (
    "CREATE TABLE kernels (id INTEGER PRIMARY KEY, name TEXT);"
    "INSERT INTO kernels VALUES (1, 'gemm'), (2, 'rmsnorm');"
    "CREATE TABLE measurements (id INTEGER PRIMARY KEY, gpu_id INTEGER DEFAULT 1, kernel_id INTEGER, shape TEXT, dtype TEXT, layout TEXT,"
    " config_name TEXT, outcome TEXT, median_us REAL, counters_json TEXT DEFAULT '{}', baseline TEXT DEFAULT '');"
    "CREATE TABLE best (gpu_id INTEGER, kernel_id INTEGER, shape TEXT, dtype TEXT, layout TEXT,"
    " measurement_id INTEGER);")


def counters(rng):
    return {
        "available": True,
        "metrics": {
            "dram__bytes_read.sum": rng.uniform(1e5, 5e7),
            "dram__bytes_write.sum": rng.uniform(1e4, 1e6),
            "gpu__time_duration.sum": rng.uniform(2e3, 4e4),
            "sm__throughput.avg.pct_of_peak_sustained_elapsed": rng.uniform(1, 95),
            "sm__warps_active.avg.pct_of_peak_sustained_active": rng.uniform(1, 60),
        },
    }


def make_db(path, rng):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    keys = {}
    for m in rng.sample([1, 8, 16, 64, 512], 3):
        shape = f"m={m},n=1024,k=2048"
        rows = []
        for i in range(rng.randint(2, 5)):
            rows.append((f"gemm.bf16.nt.mma.cfg{i}", rng.uniform(3, 20)))
        for i in range(rng.randint(2, 5)):
            rows.append((f"gemm.bf16.nt.cublaslt.v130100.a{i}", rng.uniform(3, 20)))
        rows.append(("gemm.bf16.nt.mma.broken", None))  # failed: never chosen
        expected = {}
        for name, median in rows:
            outcome = "ok" if median is not None else "incorrect"
            db.execute("INSERT INTO measurements (kernel_id, shape, dtype, layout, config_name, outcome, median_us)"
                       " VALUES (1, ?, 'bf16', 'nt', ?, ?, ?)", (shape, name, outcome, median))
        # The fastest of each kind gets a re-timed row with counters (a slightly different median).
        ok = [(n, t) for n, t in rows if t is not None]
        tpl = min((r for r in ok if ".cublaslt." not in r[0]), key=lambda r: r[1])
        lib = min((r for r in ok if ".cublaslt." in r[0]), key=lambda r: r[1])
        for label, (name, median) in (("tpl", tpl), ("lib", lib)):
            c = counters(rng)
            retimed = median * rng.uniform(0.98, 1.02)
            cur = db.execute("INSERT INTO measurements (kernel_id, shape, dtype, layout, config_name, outcome,"
                             " median_us, counters_json) VALUES (1, ?, 'bf16', 'nt', ?, 'ok', ?, ?)",
                             (shape, name, retimed, json.dumps(c)))
            expected[label] = (name, retimed, c, cur.lastrowid)
        # A baseline row faster than everything must not count as a candidate.
        db.execute("INSERT INTO measurements (kernel_id, shape, dtype, layout, config_name, outcome, median_us,"
                   " baseline) VALUES (1, ?, 'bf16', 'nt', 'cublas.bf16.nt', 'ok', 0.5, 'cublas')", (shape,))
        winner = expected["tpl"] if tpl[1] <= lib[1] else expected["lib"]
        db.execute("INSERT INTO best VALUES (1, 1, ?, 'bf16', 'nt', ?)", (shape, winner[3]))
        expected["winner"] = winner
        keys[shape] = expected
    db.commit()
    return keys


def verdict_and_rate(c):
    v = c["metrics"]
    moved = v["dram__bytes_read.sum"] + v["dram__bytes_write.sum"]
    tbs = moved / v["gpu__time_duration.sum"] / 1e3
    if 100 * tbs / PEAK_TBS >= 60:
        verdict = "memory"
    elif v["sm__throughput.avg.pct_of_peak_sustained_elapsed"] >= 60:
        verdict = "compute"
    else:
        verdict = "latency"
    return verdict, f"{tbs:.2f} TB/s"


def test_names_the_three_rows_of_every_key_with_their_counters(tmp_path):
    seed = random.getrandbits(32)
    rng = random.Random(seed)
    keys = make_db(tmp_path / "sweep.db", rng)
    out = tmp_path / "counters.md"
    subprocess.run([sys.executable, str(SCRIPT), "--db", str(tmp_path / "sweep.db"), "--out", str(out),
                    "--peak-tbs", str(PEAK_TBS)], check=True)
    lines = [l for l in out.read_text().splitlines() if l.startswith("| gemm | m=")]
    assert len(lines) == 3 * len(keys)
    labels = {"winner": "winner", "best template": "tpl", "best cuBLASLt": "lib"}
    for line in lines:
        kernel, shape, form, label, config, median, text, bound = [c.strip() for c in line.strip("|").split("|")]
        assert form == "bf16 nt", (seed, line)
        name, retimed, c, _ = keys[shape][labels[label]]
        assert name == config, (seed, line)
        assert float(median) == round(retimed, 2), (seed, line)
        verdict, rate = verdict_and_rate(c)
        assert rate in text, (seed, line)
        assert bound == verdict, (seed, line)


def test_a_kernel_without_library_rows_gets_two_rows_and_dashes_without_counters(tmp_path):
    db = sqlite3.connect(tmp_path / "s.db")
    db.executescript(
        SCHEMA + "INSERT INTO measurements (kernel_id, shape, dtype, layout, config_name, outcome, median_us)"
        " VALUES (2, 'rows=4,hidden=16', 'bf16', '', 'rmsnorm.bf16.rowwise.w4', 'ok', 3.25);"
        "INSERT INTO best VALUES (1, 2, 'rows=4,hidden=16', 'bf16', '', 1);")
    db.commit()
    out = subprocess.run([sys.executable, str(SCRIPT), "--db", str(tmp_path / "s.db")], check=True,
                         capture_output=True, text=True).stdout
    rows = [l for l in out.splitlines() if l.startswith("| rmsnorm |")]
    assert rows == [
        "| rmsnorm | rows=4,hidden=16 | bf16 | winner | rmsnorm.bf16.rowwise.w4 | 3.25 | - | - |",
        "| rmsnorm | rows=4,hidden=16 | bf16 | best template | rmsnorm.bf16.rowwise.w4 | 3.25 | - | - |",
    ]


def test_a_missing_database_is_a_usage_error_and_is_not_created(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), "--db", str(tmp_path / "none.db")], capture_output=True,
                       text=True)
    assert r.returncode == 2
    assert "no database at" in r.stderr
    assert not (tmp_path / "none.db").exists()
