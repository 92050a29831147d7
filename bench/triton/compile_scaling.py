#!/usr/bin/env python3
"""How the ahead-of-time compile of a Triton kernel's configs scales with parallel workers.

Every config of examples/triton's matmul (24) is compiled for sm_90 in the one specialization a
key runs (bf16, --shape), as a tuning compiles them (ktune.triton's Description): first one at a
time (each config's own time), then all at once in --workers threads (what Description.write does)
and in --workers forked processes; before those, all at once in threads as the process's first
compiles (what a tuning's write meets). Each pass starts from an empty Triton cache. If the threads'
wall is far above the processes', the compiles serialize on Python's GIL; if both sit near the
slowest single config, that config is the wall and more workers cannot shorten it.

Needs triton (no GPU, no driver). Prints a table and writes compile_scaling.json into --out.

    python3 bench/triton/compile_scaling.py --out results/ [--workers 16] [--shape m=512,n=4096,k=4096]
"""

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "examples" / "triton")]

_DESC = None  # the description the forked workers compile from (inherited, not pickled)


def _compile(job):
    config, dtype, variant = job
    start = time.perf_counter()
    _DESC._compile_one(_DESC.configs[config], dtype, "sm_90", *_DESC.specializations()[variant])
    return time.perf_counter() - start


def _fresh_cache():
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ktune-compile-scaling-")


def _label(job):
    p = _DESC.point(_DESC.configs[job[0]])
    return ".".join(f"{k}={v}" for k, v in p.items())


def _threads(jobs, workers):
    _fresh_cache()
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(_compile, jobs))
    return time.perf_counter() - start


def measure(shape, workers):
    jobs = _DESC._jobs([("bf16", shape)])
    out = {"shape": shape, "workers": workers, "cubins": len(jobs), "cpus": os.cpu_count()}
    out["threads_first_wall_s"] = _threads(jobs, workers)  # the process's first compiles, as a tuning's
    _fresh_cache()
    serial = [_compile(j) for j in jobs]
    out["serial_s"] = dict(zip((_label(j) for j in jobs), serial))
    out["threads_wall_s"] = _threads(jobs, workers)
    _fresh_cache()
    start = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers,
                                                mp_context=multiprocessing.get_context("fork")) as pool:
        list(pool.map(_compile, jobs))
    out["processes_wall_s"] = time.perf_counter() - start
    return out


def table(r):
    s = sorted(r["serial_s"].values(), reverse=True)
    lines = [f"{r['cubins']} cubins of the matmul at {r['shape']}, bf16, sm_90; {r['cpus']} CPUs, "
             f"{r['workers']} workers",
             "| | seconds |", "|---|---:|",
             f"| one at a time, sum | {sum(s):.2f} |",
             f"| slowest config alone | {s[0]:.2f} |",
             f"| next four slowest | {', '.join(f'{t:.2f}' for t in s[1:5])} |",
             f"| median config | {s[len(s) // 2]:.2f} |",
             f"| all in {r['workers']} threads, the process's first compiles, wall | {r['threads_first_wall_s']:.2f} |",
             f"| all in {r['workers']} threads, wall | {r['threads_wall_s']:.2f} |",
             f"| all in {r['workers']} processes (fork), wall | {r['processes_wall_s']:.2f} |"]
    return "\n".join(lines)


def main(argv=None):
    global _DESC
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for compile_scaling.json")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="threads and processes (default: CPUs)")
    ap.add_argument("--shape", default="m=512,n=4096,k=4096", help="the key whose specialization is compiled")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    try:
        import matmul
    except ImportError as e:
        print(f"compile_scaling: cannot import the example ({e.name} is not installed)", file=sys.stderr)
        return 3
    _DESC = matmul.matmul_tiles.description
    r = measure(args.shape, args.workers)
    text = table(r)
    print(text)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_scaling.json").write_text(json.dumps(r, indent=1) + "\n")
    (out / "compile_scaling.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
