#!/usr/bin/env python3
"""ktune.triton.autotune against triton.autotune on one matmul key, as a served program meets them.

The kernel is examples/triton/matmul.py's (its 24 configs: BLOCK_M/N/K, num_warps, num_stages),
wrapped twice: by ktune.triton.autotune (bf16, winners in ktune's database) and by triton.autotune
(cache_results=True: Triton 3.6 keeps a key's timings on disk, TRITON_CACHE_AUTOTUNING=1 does the
same). On a GPU, for the key --shape (default m=512,n=4096,k=4096, bf16), it measures

  (b) tuning the key: ktune's wall time (every config compiled ahead of time in a fresh folder while
      `ktune tune` verifies and times the compiled ones in its worker) against triton.autotune's cold first call
      (a fresh process with a fresh TRITON_CACHE_DIR: compile and benchmark every config);
  (a) the first call of the tuned key in a fresh process that has imported the module (wall time
      from the call to its end, synchronized; the median of --trials processes): ktune's stored
      winner looked up in the database, the same looked up from `ktune serve` (when the ktune
      binary has the service), and triton.autotune with its disk cache warm; every child checks
      its result against a float64 matmul of its random inputs;
  (c) --processes processes started together (a barrier before the first call) with one database:
      the winners they report (ktune: one, the stored one); and the same count for triton.autotune
      processes started together on a cold cache (each benchmarks for itself, on one GPU);
  and re-times every config side by side in CUDA graphs with rotated inputs (bench/runtime/
  side_by_side.time_graph: copies of the inputs together larger than twice the L2, interleaved
  rounds, the median), so that each tuner's choice is measured against the best config (the issue's
  target: within 2 %). The SM clock and power draw are sampled (bench/runtime/gpu_clocks.py) during
  Triton's cold call, ktune's tuning and the re-time: whether a tuner timed its configs at the clock
  the re-time sees.

It prints a table and writes autotune_vs_triton.md and autotune_vs_triton.json (every raw number)
into --out. Without torch or a CUDA device it says so and exits 3 (nothing is measured).

    python3 bench/triton/autotune_vs_triton.py --out results/ [--shape m=16,n=4096,k=4096]
    scripts/gpu/verify.sh --triton-bench            # on the GPU machine: triton/
"""

import argparse
import json
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (ROOT / "python", ROOT / "examples" / "triton", ROOT / "bench" / "runtime"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

try:
    import triton
except ImportError:
    if __name__ == "__main__":
        print("autotune_vs_triton.py: cannot run: triton is not installed; this bench needs Triton and a CUDA GPU "
              "(nothing was measured)", file=sys.stderr)
        sys.exit(3)
    raise

from ktune import triton as kt  # noqa: E402

import matmul  # noqa: E402
from gpu_clocks import ClockSampler, describe  # noqa: E402

_EXAMPLE = matmul.matmul_tiles.description
CONFIGS = _EXAMPLE.configs
KEY = ["M", "N", "K"]
TARGET_GAP_PCT = 2.0  # the target: the chosen config within 2 % of the best re-timed one

# The same jit function and configs under both tuners; ktune's for bf16 only, as Triton's compiles
# the configs of the one dtype it is called with.
ktune_matmul = kt.autotune(configs=CONFIGS, key=KEY, dtypes=["bf16"], args=_EXAMPLE.args, grid=_EXAMPLE.grid,
                           reference=_EXAMPLE.reference, work=_EXAMPLE.work)(matmul.matmul_tiles.fn)
triton_matmul = triton.autotune(configs=CONFIGS, key=KEY, cache_results=True)(matmul.matmul_tiles.fn)


def parse_shape(text):
    """{"m": .., "n": .., "k": ..} of "m=512,n=4096,k=4096"; ValueError naming what is wrong."""
    dims = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name not in ("m", "n", "k") or not value.isdigit() or int(value) <= 0 or name in dims:
            raise ValueError(f"--shape {text!r}: expected m=..,n=..,k=.. with positive integers")
        dims[name] = int(value)
    if set(dims) != {"m", "n", "k"}:
        raise ValueError(f"--shape {text!r}: expected m=..,n=..,k=..")
    return dims


def point(config):
    """A triton.Config as the parameter values both sides report (description.Description.point)."""
    return kt.Description.point(config)


def tune_phases(doc):
    """`ktune tune`'s wall time and its key's measuring and compile-waiting seconds, from its JSON."""
    if not doc or not doc.get("keys"):
        return "n/a"
    key = doc["keys"][0]
    return f"{doc.get('wall_s', float('nan')):.2f}, {key.get('measure_s', float('nan')):.2f}, " \
           f"{key.get('compile_wait_s', float('nan')):.2f}"


def config_label(p):
    """A short name of a config's point: 128x256x64.g8.w8.s3."""
    return f"{p['BLOCK_M']}x{p['BLOCK_N']}x{p['BLOCK_K']}.g{p['GROUP_M']}.w{p['num_warps']}.s{p['num_stages']}"


def worker_times(db, kernel):
    """What ktune's worker measured for each config of `kernel` (by label), from its database: the
    microseconds and the SM clock (MHz, None when not read) of the config's last row, the contenders'
    interleaved re-time where there was one. Set beside the re-time, they say whether a choice the
    re-time ranks otherwise was measured as another kernel, at another clock, or within noise."""
    import re
    import sqlite3
    out = {}
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT m.config_name, m.median_us, m.sm_clock_mhz FROM measurements m JOIN kernels k "
                         "ON k.id = m.kernel_id WHERE k.name = ? AND m.outcome = 'ok' ORDER BY m.rowid", (kernel,))
        for name, us, mhz in rows:
            p = dict(re.findall(r"\b(BLOCK_M|BLOCK_N|BLOCK_K|GROUP_M)=(\d+)", name))
            w, st = re.search(r"\.w(\d+)\.s(\d+)$", name).groups()
            label = config_label({**{k: int(v) for k, v in p.items()}, "num_warps": int(w), "num_stages": int(st)})
            out[label] = {"us": us, "sm_mhz": mhz}
    return out


def gap_pct(t, best):
    """How much slower than the best a time is, in percent."""
    return (t / best - 1.0) * 100.0


def device_problem():
    """Why this bench cannot run here (no torch, no CUDA device), or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


# --- the measured calls ------------------------------------------------------------------------------


def inputs(dims, seed, sets=1):
    """`sets` random (a, b, c) triples on the GPU: values in ±[0.25, 1.75], never zeros."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(seed)
    out = []
    for _ in range(sets):
        def rand(*shape):
            t = torch.rand(*shape, device="cuda", generator=g) * 1.5 + 0.25
            return (t * (torch.randint(0, 2, shape, device="cuda", generator=g) * 2 - 1)).to(torch.bfloat16)
        a, b = rand(dims["m"], dims["k"]), rand(dims["k"], dims["n"])
        out.append((a, b, torch.empty(dims["m"], dims["n"], device="cuda", dtype=torch.bfloat16)))
    return out


def launch(kernel, a, b, c, **config):
    """c = a @ b through `kernel` (either autotuner, or the jit function with `config`'s values)."""
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                 **config)


def rel_error(c, a, b):
    want = a.double() @ b.double()
    return ((c.double() - want).norm() / want.norm()).item()


def child(args):
    """One fresh process's first call (a, c): prints one JSON line."""
    import torch
    imported_s = time.perf_counter() - float(os.environ["KTUNE_BENCH_T0"])
    dims = parse_shape(args.shape)
    ((a, b, c),) = inputs(dims, seed=args.seed)
    torch.cuda.synchronize()
    if args.barrier:
        pathlib.Path(args.barrier, f"ready.{os.getpid()}").touch()
        go = pathlib.Path(args.barrier, "go")
        while not go.exists():
            time.sleep(0.001)
    kernel = ktune_matmul if args.side == "ktune" else triton_matmul
    t0 = time.perf_counter()
    launch(kernel, a, b, c)
    torch.cuda.synchronize()
    first_call_ms = (time.perf_counter() - t0) * 1000.0
    doc = {"side": args.side, "first_call_ms": first_call_ms, "import_s": imported_s,
           "point": point(kernel.best_config), "rel_error": rel_error(c, a, b)}
    if args.side == "ktune":
        doc["source"] = list(ktune_matmul.sources.values())
        doc["server"] = ktune_matmul.server
    else:
        doc["bench_s"] = getattr(triton_matmul, "bench_time", None)  # set only when it benchmarked
    print(json.dumps(doc), flush=True)


def spawn(side, shape, env, seed, barrier=None):
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", side, "--shape", shape,
           "--seed", str(seed)]
    if barrier:
        cmd += ["--barrier", barrier]
    env = {**env, "KTUNE_BENCH_T0": repr(time.perf_counter())}
    # perf_counter is CLOCK_MONOTONIC on Linux: the child's clock is this one's. Its stderr goes to
    # a file, so that children read one after another never block on a full pipe.
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    proc.err_file = err
    return proc


def _stderr(proc):
    proc.err_file.seek(0)
    return proc.err_file.read()


def collect(proc, what, timeout=600):
    out, _ = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{what}: the child exited {proc.returncode}: {_stderr(proc).strip()[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def together(side, shape, env, n, seed):
    """n children started together: each waits at a barrier after its imports, then calls."""
    barrier = tempfile.mkdtemp(prefix="ktune_bench_barrier_")
    try:
        procs = [spawn(side, shape, env, seed + i, barrier) for i in range(n)]
        deadline = time.monotonic() + 600
        while len(list(pathlib.Path(barrier).glob("ready.*"))) < n:
            dead = [p for p in procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                for p in procs:
                    p.kill()
                raise RuntimeError(f"{side} x{n}: a child ended or hung before the barrier: "
                                   f"{(_stderr(dead[0]) if dead else 'timeout')[-3000:]}")
            time.sleep(0.01)
        pathlib.Path(barrier, "go").touch()
        return [collect(p, f"{side} x{n}") for p in procs]
    finally:
        shutil.rmtree(barrier, ignore_errors=True)


class Serve:
    """`ktune serve --read-only` on the database, on a free loopback port; None when it cannot start."""

    def __init__(self, db):
        from ktune._executable import ktune_executable
        self.proc = subprocess.Popen([ktune_executable(), "serve", "--read-only", "--db", str(db), "--listen",
                                      "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening on " not in line:
            self.proc.kill()
            raise RuntimeError(f"ktune serve did not start: {line!r} {self.proc.stderr.read()[-1000:]!r}")
        self.url = line.split("listening on ", 1)[1].split(" ", 1)[0]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# --- the parent --------------------------------------------------------------------------------------


def retime(dims, points, rounds):
    """Microseconds a call of each config (by point), side by side: CUDA graphs over rotated inputs
    together larger than twice the L2, `rounds` interleaved rounds, the median."""
    import torch
    from side_by_side import time_graph
    set_bytes = 2 * (dims["m"] * dims["k"] + dims["k"] * dims["n"] + dims["m"] * dims["n"])
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sets = inputs(dims, seed=11, sets=max(2, -(-2 * l2 // set_bytes) + 1))
    configs = {config_label(p): _EXAMPLE.config_of(p) for p in points}
    times = {name: [] for name in configs}
    errors = {}
    for r in range(rounds):
        order = list(configs) if r % 2 == 0 else list(reversed(configs))
        for name in order:
            if name in errors:
                continue
            cfg = configs[name]
            try:
                times[name].append(time_graph(lambda i, cfg=cfg: launch(matmul.matmul_tiles.fn, *sets[i],
                                                                        **cfg.all_kwargs()), sets))
            except Exception as e:  # a config this GPU cannot run (e.g. out of shared memory) never wins
                errors[name] = f"{type(e).__name__}: {e}"[:500]
                torch.cuda.synchronize()
    return {name: {"us": statistics.median(t) if name not in errors else float("inf"), "rounds": t,
                   **({"error": errors[name]} if name in errors else {})} for name, t in times.items()}


def summarize(raw):
    """The table's rows (label, ktune, triton) and the verdicts from the raw numbers."""
    a, b, c, t = raw["first_call"], raw["tuning"], raw["together"], raw["retimed"]
    best_name = min(t, key=lambda n: t[n]["us"])
    best_us = t[best_name]["us"]
    picks = {side: config_label(raw["winners"][side]) for side in ("ktune", "triton")}
    gaps = {side: gap_pct(t[picks[side]]["us"], best_us) for side in picks}
    med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    served = a.get("ktune_server")
    rows = [
        ("first call, fresh process (ms, median)", f"{med(a['ktune']):.1f}", f"{med(a['triton']):.1f}"),
        ("  ktune from `ktune serve` (ms, median)", f"{med(served):.1f}" if served else "n/a", ""),
        ("tuning the key, cold (s)", f"{b['ktune_s']:.1f} (compiles done at {b['ktune_compile_s']:.1f})",
         f"{b['triton_s']:.1f} (benchmark {b['triton_bench_s']:.1f})"),
        ("  of it `ktune tune` (s): wall, measuring, waiting for compiles", tune_phases(b.get("ktune_doc")), ""),
        ("chosen config", picks["ktune"], picks["triton"]),
        ("chosen config re-timed in a graph (us)", f"{t[picks['ktune']]['us']:.2f}", f"{t[picks['triton']]['us']:.2f}"),
        (f"gap to the best of {len(t)} ({best_name}, {best_us:.2f} us)", f"{gaps['ktune']:+.2f} %",
         f"{gaps['triton']:+.2f} %"),
        (f"{c['n']} processes together: distinct winners", str(len(c["ktune"])),
         str(len(c["triton"])) if c.get("triton") is not None else "not run"),
    ]
    verdicts = {"ktune_within_target": gaps["ktune"] <= TARGET_GAP_PCT,
                "triton_within_target": gaps["triton"] <= TARGET_GAP_PCT,
                "ktune_one_winner": len(c["ktune"]) == 1 and c["ktune"][0] == picks["ktune"],
                "first_call_faster": med(a["ktune"]) < med(a["triton"])}
    return rows, verdicts, {"best": best_name, "best_us": best_us, "gaps_pct": gaps, "picks": picks}


def table(raw):
    rows, verdicts, _ = summarize(raw)
    head = f"matmul {raw['shape']} bf16 on {raw['gpu']} (Triton {raw['triton']}, {len(raw['retimed'])} configs)"
    lines = [head, "", "| | ktune.triton.autotune | triton.autotune |", "|---|---|---|"]
    lines += [f"| {label} | {k} | {t} |" for label, k, t in rows]
    lines += ["", "targets: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in verdicts.items())]
    t, w = raw["retimed"], raw.get("worker", {})
    lines += ["", f"every config: re-timed in CUDA graphs with rotated inputs (us, median of {raw.get('rounds', '?')} "
              "rounds) and ktune's worker median from the tuning, with the SM clock the worker read", "",
              "| config | re-timed | worker | worker SM MHz |", "|---|---:|---:|---:|"]

    def worker(n):
        if n not in w:
            return "- | -"
        mhz = w[n].get("sm_mhz")
        return f"{w[n]['us']:.2f} | {'-' if mhz is None else f'{mhz:.0f}'}"

    lines += [f"| {n} | {t[n]['us']:.2f} | {worker(n)} |" for n in sorted(t, key=lambda n: t[n]["us"])]
    if raw.get("clocks"):
        lines += ["", "GPU clock and power while each stretch ran (nvidia-smi every 50 ms):", ""]
        lines += [f"- {stretch}: {describe(s)}" for stretch, s in raw["clocks"].items()]
    return lines


def run(args):
    import torch
    dims = parse_shape(args.shape)
    shape = f"m={dims['m']},n={dims['n']},k={dims['k']}"
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="ktune_autotune_vs_triton_"))
    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    db = work / "bench.db"
    env = {**os.environ, "KTUNE_DB": str(db), "KTUNE_TRITON_DIR": str(work / "folders"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT / "examples" / "triton"),
                                          os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "KTUNE_NO_PROGRESS": "1"}
    env.pop("KTUNE_SERVER", None)
    os.environ.pop("KTUNE_SERVER", None)
    os.environ.update({k: env[k] for k in ("KTUNE_DB", "KTUNE_TRITON_DIR")})
    os.environ["TRITON_CACHE_DIR"] = str(work / "triton-parent")  # the ahead-of-time compiles start cold too
    raw = {"shape": shape, "dtype": "bf16", "gpu": torch.cuda.get_device_name(), "arch": arch,
           "triton": triton.__version__, "trials": args.trials}

    # (b) tuning, cold: Triton's first call in a fresh process and cache; ktune's compile + tune.
    triton_env = {**env, "TRITON_CACHE_DIR": str(work / "triton-cache")}
    clocks = {}
    t0 = time.perf_counter()
    with ClockSampler() as sampler:
        cold = collect(spawn("triton", shape, triton_env, seed=1), "triton.autotune, cold")
    clocks["triton.autotune's cold call"] = sampler.summary()
    triton_process_s = time.perf_counter() - t0
    # ktune_matmul.tune compiles the tuned dtype's cubins of the shape's specialization while `ktune
    # tune` already measures the ready ones; the compiles end at the cubin index's last rewrite
    t0, wall0 = time.perf_counter(), time.time()
    with ClockSampler() as sampler:
        doc = ktune_matmul.tune([dims], "bf16", arch=arch, extra_args=["--strategy", "exhaustive"])
    clocks["ktune's tuning (its worker's timing)"] = sampler.summary()
    ktune_s = time.perf_counter() - t0
    (index,) = (work / "folders").glob("*/*.cubins/index.toml")
    compile_s = index.stat().st_mtime - wall0
    config, best_doc = kt.best(ktune_matmul.description, dims, "bf16", gpu=raw["gpu"])
    if config is None:
        raise RuntimeError(f"ktune tuned no winner for {shape}: {json.dumps(doc)[-2000:]}")
    raw["tuning"] = {"triton_s": cold["first_call_ms"] / 1000.0, "triton_process_s": triton_process_s,
                     "triton_bench_s": cold["bench_s"] or float("nan"), "triton_rel_error": cold["rel_error"],
                     "ktune_s": ktune_s, "ktune_compile_s": compile_s, "ktune_doc": doc, "ktune_best": best_doc}
    raw["winners"] = {"ktune": point(config), "triton": cold["point"]}

    # (a) the first call of the tuned key in fresh processes, both caches warm.
    first = {"ktune": [], "triton": [], "ktune_server": []}
    children = {"ktune": [], "triton": [], "ktune_server": []}
    server = None
    try:
        server = Serve(db)
    except Exception as e:  # a binary without the service: the row says n/a, with the reason
        raw["server_error"] = str(e)
    try:
        for trial in range(args.trials):
            for side, side_env in (("ktune", triton_env), ("triton", triton_env), ("ktune_server", triton_env)):
                if side == "ktune_server":
                    if server is None:
                        continue
                    side_env = {k: v for k, v in side_env.items() if k != "KTUNE_DB"}
                    side_env["KTUNE_SERVER"] = server.url
                doc = collect(spawn("triton" if side == "triton" else "ktune", shape, side_env, seed=100 + trial),
                              f"first call ({side})")
                children[side].append(doc)
                first[side].append(doc["first_call_ms"])
    finally:
        if server is not None:
            server.stop()
    raw["first_call"] = first
    raw["first_call_children"] = children

    # (c) processes started together.
    ktune_runs = together("ktune", shape, triton_env, args.processes, seed=200)
    raw["together_children"] = {"ktune": ktune_runs}
    together_winners = {"n": args.processes, "ktune": sorted({config_label(r["point"]) for r in ktune_runs})}
    if not args.no_triton_together:
        fresh = {**env, "TRITON_CACHE_DIR": str(work / "triton-together")}
        triton_runs = together("triton", shape, fresh, args.processes, seed=300)
        raw["together_children"]["triton"] = triton_runs
        together_winners["triton"] = sorted({config_label(r["point"]) for r in triton_runs})
    raw["together"] = together_winners

    # Every config re-timed side by side (its kernels from the cache Triton's cold run filled).
    os.environ["TRITON_CACHE_DIR"] = triton_env["TRITON_CACHE_DIR"]
    with ClockSampler() as sampler:
        raw["retimed"] = retime(dims, [point(c) for c in CONFIGS], args.rounds)
    clocks["the side-by-side re-time"] = sampler.summary()
    raw["clocks"] = clocks
    raw["rounds"] = args.rounds
    raw["worker"] = worker_times(db, ktune_matmul.description.name)

    # Every child's result against float64, and the served source.
    checks = [c for side in children.values() for c in side] + [c for runs in raw["together_children"].values()
                                                                 for c in runs] + [cold]
    raw["max_rel_error"] = max(c["rel_error"] for c in checks)
    raw["ktune_sources"] = sorted({s for c in children["ktune"] + children["ktune_server"] + ktune_runs
                                   for s in c["source"]})
    rows, verdicts, picked = summarize(raw)
    raw["verdicts"], raw["summary"] = verdicts, picked
    lines = table(raw)
    problems = []
    if raw["max_rel_error"] > 1e-2:
        problems.append(f"a child's result is off by {raw['max_rel_error']:.3g} (relative, against float64)")
    if raw["ktune_sources"] != ["tuned"]:
        problems.append(f"ktune's children served {raw['ktune_sources']}, not only the tuned winner")
    lines += [f"max relative error against float64: {raw['max_rel_error']:.2e}"] + [f"PROBLEM: {p}" for p in problems]
    (out / "autotune_vs_triton.md").write_text("\n".join(lines) + "\n")
    (out / "autotune_vs_triton.json").write_text(json.dumps(raw, indent=1, default=str) + "\n")
    print("\n".join(lines))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="folder for autotune_vs_triton.md and .json (required unless --child)")
    p.add_argument("--shape", default="m=512,n=4096,k=4096")
    p.add_argument("--trials", type=int, default=5, help="fresh processes a side for the first call (default 5)")
    p.add_argument("--processes", type=int, default=8, help="processes started together (default 8)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved re-timing rounds (default 3)")
    p.add_argument("--no-triton-together", action="store_true",
                   help="skip the triton.autotune processes started together on a cold cache")
    p.add_argument("--keep", action="store_true", help="keep the working folder (database, caches)")
    p.add_argument("--child", choices=["ktune", "triton"], help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--barrier", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        parse_shape(args.shape)
    except ValueError as e:
        p.error(str(e))
    if args.child:
        args.side = args.child
        child(args)
        return 0
    if not args.out:
        p.error("--out is required")
    why = device_problem()
    if why:
        print(f"autotune_vs_triton.py: cannot run: {why}; this bench needs a CUDA GPU (nothing was measured)",
              file=sys.stderr)
        return 3
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
