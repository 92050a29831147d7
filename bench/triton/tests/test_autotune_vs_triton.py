"""What bench/triton/autotune_vs_triton.py does without a GPU: its shape argument, the table and
verdicts it makes of raw numbers (random here, the expected gaps computed by hand below), and that
it refuses to run, exit 3 with the reason, where there is no CUDA device."""

import pathlib
import random
import subprocess
import sys

import pytest

pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import autotune_vs_triton as bench  # noqa: E402


def test_shapes_are_m_n_k():
    assert bench.parse_shape("m=16,n=4096,k=512") == {"m": 16, "n": 4096, "k": 512}
    for bad in ("m=16,n=4096", "m=0,n=1,k=1", "m=1,n=1,k=1,q=2", "m=1,m=2,k=3", "m=x,n=1,k=1"):
        with pytest.raises(ValueError, match="--shape"):
            bench.parse_shape(bad)


def _raw(rng):
    points = [bench.point(c) for c in bench.CONFIGS]
    names = [bench.config_label(p) for p in points]
    assert len(set(names)) == len(bench.CONFIGS) == 24
    retimed = {n: {"us": rng.uniform(50.0, 200.0), "rounds": []} for n in names}
    ktune_pick, triton_pick = rng.choice(points), rng.choice(points)
    return {"shape": "m=512,n=4096,k=4096", "gpu": "a GPU", "triton": "3.6.0", "retimed": retimed,
            "first_call": {"ktune": [rng.uniform(1, 100) for _ in range(5)], "triton": [rng.uniform(1, 100)],
                           "ktune_server": []},
            "tuning": {"ktune_s": 9.0, "ktune_compile_s": 4.0, "triton_s": 30.0, "triton_bench_s": 3.0},
            "winners": {"ktune": ktune_pick, "triton": triton_pick},
            "together": {"n": 8, "ktune": [bench.config_label(ktune_pick)], "triton": names[:3]}}


def test_the_verdicts_follow_the_raw_numbers():
    rng = random.Random()
    for _ in range(20):
        raw = _raw(rng)
        rows, verdicts, picked = bench.summarize(raw)
        times = {n: t["us"] for n, t in raw["retimed"].items()}
        best = min(times.values())
        k = times[bench.config_label(raw["winners"]["ktune"])]
        assert picked["best_us"] == best
        assert abs(picked["gaps_pct"]["ktune"] - (k - best) / best * 100.0) < 1e-9
        assert verdicts["ktune_within_target"] == ((k - best) / best * 100.0 <= 2.0)
        assert verdicts["ktune_one_winner"] is True
        by_name = dict((r[0], r[1:]) for r in rows)
        assert by_name["8 processes together: distinct winners"] == ("1", "3")
        assert by_name["  of it `ktune tune` (s): wall, measuring, waiting for compiles"] == ("n/a", "")
        wall, measure, wait = (rng.uniform(0, 9) for _ in range(3))
        raw["tuning"]["ktune_doc"] = {"wall_s": wall, "keys": [{"measure_s": measure, "compile_wait_s": wait}]}
        assert dict((r[0], r[1:]) for r in bench.summarize(raw)[0])[
            "  of it `ktune tune` (s): wall, measuring, waiting for compiles"] == (
            f"{wall:.2f}, {measure:.2f}, {wait:.2f}", "")
        lines = bench.table(raw)
        assert lines[0].startswith("matmul m=512,n=4096,k=4096 bf16 on a GPU") and any(ln.startswith("| chosen config |") for ln in lines)
        assert sum(ln.endswith(" | - | - |") for ln in lines) == 24  # no worker times in this raw: every row says so
        assert not any("nvidia-smi" in ln for ln in lines)  # no clocks in this raw: no clock lines
        raw["clocks"] = {"ktune's tuning (its worker's timing)": {"samples": 3, "sm_mhz_median": 1755.0,
                                                                   "sm_mhz_min": 1600.0, "power_w_median": 650.0,
                                                                   "power_w_max": 699.0},
                         "the side-by-side re-time": {"samples": 0, "error": "nvidia-smi is not on PATH"}}
        lines = bench.table(raw)
        assert "- ktune's tuning (its worker's timing): SM 1755 MHz median (min 1600), 650 W median (max 699), 3 samples" in lines
        assert "- the side-by-side re-time: not sampled (nvidia-smi is not on PATH)" in lines


@pytest.mark.skipif(bench.device_problem() is None, reason="a CUDA device is here: the bench would run")
def test_without_a_device_it_exits_3_saying_why(tmp_path):
    done = subprocess.run([sys.executable, str(HERE.parent / "autotune_vs_triton.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "cannot run: " + bench.device_problem() in done.stderr and "nothing was measured" in done.stderr
    assert not list(tmp_path.iterdir())


def test_the_worker_times_are_read_back_by_config_label(tmp_path):
    """worker_times against a two-table stand-in of the database (the columns it reads): only the
    kernel's measured rows, each under its config's label, the config's last row (its re-time)
    winning over its first; the table shows each with its clock."""
    import sqlite3
    db = tmp_path / "w.db"
    rng = random.Random()
    kernel = bench.ktune_matmul.description.name
    points = rng.sample([bench.point(c) for c in bench.CONFIGS], 3)
    names = [f"{kernel}.bf16.triton.3.6.0.BLOCK_M={p['BLOCK_M']}.BLOCK_N={p['BLOCK_N']}.BLOCK_K={p['BLOCK_K']}"
             f".GROUP_M={p['GROUP_M']}.w{p['num_warps']}.s{p['num_stages']}" for p in points]
    times = [rng.uniform(10.0, 90.0) for _ in range(3)]
    clocks = [rng.choice([1755.0, 1830.0, 1980.0]) for _ in range(3)]
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE kernels (id INTEGER PRIMARY KEY, name TEXT)")
        c.execute("CREATE TABLE measurements (kernel_id INTEGER, config_name TEXT, outcome TEXT, median_us REAL, "
                  "sm_clock_mhz REAL)")
        c.executemany("INSERT INTO kernels VALUES (?, ?)", [(1, kernel), (2, "other")])
        c.execute("INSERT INTO measurements VALUES (1, ?, 'ok', ?, ?)", (names[0], times[2], None))  # first row
        c.executemany("INSERT INTO measurements VALUES (1, ?, 'ok', ?, ?)", zip(names[:2], times[:2], clocks[:2]))
        c.execute("INSERT INTO measurements VALUES (1, ?, 'incorrect', NULL, NULL)", (names[2],))
        c.execute("INSERT INTO measurements VALUES (2, ?, 'ok', 1.0, 1980.0)", (names[2],))
    got = bench.worker_times(db, kernel)
    labels = [bench.config_label(p) for p in points]
    assert got == {labels[0]: {"us": times[0], "sm_mhz": clocks[0]}, labels[1]: {"us": times[1], "sm_mhz": clocks[1]}}
    raw = _raw(rng)
    raw["worker"] = {**got, labels[2]: {"us": 5.0, "sm_mhz": None}}
    lines = bench.table(raw)
    row = next(ln for ln in lines if ln.startswith(f"| {labels[0]} |"))
    assert row.endswith(f" | {times[0]:.2f} | {clocks[0]:.0f} |")
    assert next(ln for ln in lines if ln.startswith(f"| {labels[2]} |")).endswith(" | 5.00 | - |")
