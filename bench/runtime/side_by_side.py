"""What the side-by-side benches (gemm_vs_torch, attention_vs_torch, ops_vs_torch) share: how they
time a call, as a model served from CUDA graphs pays for it, and how they write their results.

time_graph(fn_of_set, sets) captures fn_of_set(i) N times in one CUDA graph, rotating over the
sets (copies of the inputs, together larger than twice the L2 when the caller sizes them so, so no
call finds its inputs in the cache), replays it and returns microseconds a call = replay time / N,
the median of 5 replays. N is sized from a short first graph so that a replay takes ~target_us.
"""

import csv
import math
import pathlib
import statistics
import sys

import torch


def time_graph(fn_of_set, sets, target_us=2000.0, replays=5):
    """Microseconds a call: fn_of_set(i) captured N times over the sets in one graph, replayed."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for i in range(len(sets)):
            fn_of_set(i)  # warm: plans prepared, cuBLAS workspace allocated
    torch.cuda.synchronize()
    # estimate from a short graph, then size the real one to ~target_us
    def build(n):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            for j in range(n):
                fn_of_set(j % len(sets))
        return g

    def replay_us(g, n):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        g.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(replays):
            start.record()
            g.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000.0 / n)
        return statistics.median(times)

    n0 = len(sets)
    est = replay_us(build(n0), n0)
    n = max(len(sets), min(4096, int(math.ceil(target_us / max(est, 0.5)))))
    n = int(math.ceil(n / len(sets)) * len(sets))
    return replay_us(build(n), n)


def open_runtime(script, parser, db):
    """The ktune.Runtime a bench times (misses served by the default config), or None after saying
    why there is no CUDA device (the caller exits 3); a missing --db is the parser's usage error."""
    if not torch.cuda.is_available():
        print(f"{script}: no CUDA device", file=sys.stderr)
        return None
    if not db:
        parser.error("--db is required")
    import ktune
    return ktune.Runtime(db=db, on_miss="default")


def geomean(xs):
    """Geometric mean of positive numbers; nan for none."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def write_results(lines, rows, out=None, csv_path=None):
    """The Markdown lines to `out` (stdout when None) and the rows (dicts) to `csv_path` if given."""
    text = "\n".join(lines) + "\n"
    if out:
        pathlib.Path(out).write_text(text)
    else:
        sys.stdout.write(text)
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["empty"])
            w.writeheader()
            w.writerows(rows)
