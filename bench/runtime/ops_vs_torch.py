#!/usr/bin/env python3
"""ktune's tuned memory-bound operators against what a PyTorch user would pick instead, all replayed
in CUDA graphs with rotated inputs.

For each (operator, size) asked for (default: rmsnorm 4096x4096 and 16384x8192, softmax 4096x32768,
swiglu 16384x14336; bf16), on a GPU, this times
  ktune:   ktune.Runtime.rmsnorm / softmax / swiglu served from DB (the sweep's winner),
  eager:   the operator written in torch as a model writes it (RMSNorm in f32, F.softmax, F.silu * up),
  compile: the same function through torch.compile (Inductor's Triton kernels, fullgraph),
  triton:  a plain Triton kernel, one program a row (rmsnorm, softmax) or a 1-D block grid (swiglu),
the same way (side_by_side.time_graph): copies of the inputs and outputs together larger than twice the
L2, one CUDA graph of N calls rotating over them, replayed. It checks each output against eager's
and writes a Markdown table: microseconds, GB/s (bytes read + written once / time) and the ratio
other / ktune of each (above 1: ktune faster).

    python3 bench/runtime/ops_vs_torch.py --db sweep.db [--only rmsnorm] [--out table.md] [--csv t.csv]

With --profile it calls ktune, the compiled function and the Triton kernel once each a size (one
input set, no graphs, no timing, no table), for a profiler to read, e.g.
    ncu --csv -k regex:'ktune_|triton' --metrics dram__bytes_read.sum,... python3 ... --profile
"""

import argparse
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from side_by_side import geomean, time_graph, write_results  # noqa: E402

EPS = 1e-6
# (operator, dims as ktune names them)
SIZES = [("rmsnorm", {"rows": 4096, "hidden": 4096}), ("rmsnorm", {"rows": 16384, "hidden": 8192}),
         ("softmax", {"rows": 4096, "cols": 32768}), ("swiglu", {"m": 16384, "i": 14336})]


@triton.jit
def _rmsnorm_row(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(y_ptr + row * n + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_row(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _swiglu_block(x_ptr, y_ptr, i, total, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    r = offs // i
    c = offs % i
    g = tl.load(x_ptr + r * 2 * i + c, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + r * 2 * i + i + c, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (g / (1.0 + tl.exp(-g)) * u).to(y_ptr.dtype.element_ty), mask=mask)


def eager_rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype)


def eager_softmax(x):
    return F.softmax(x, dim=-1)


def eager_swiglu(x):
    g, u = x.chunk(2, dim=-1)
    return F.silu(g) * u


def triton_rmsnorm(x, w, y):
    n = x.shape[1]
    block = triton.next_power_of_2(n)
    _rmsnorm_row[(x.shape[0],)](x, w, y, n, EPS, BLOCK=block, num_warps=min(16, max(4, block // 1024)))


def triton_softmax(x, y):
    n = x.shape[1]
    block = triton.next_power_of_2(n)
    _softmax_row[(x.shape[0],)](x, y, n, BLOCK=block, num_warps=min(32, max(4, block // 1024)))


def triton_swiglu(x, y):
    total = y.numel()
    _swiglu_block[(triton.cdiv(total, 1024),)](x, y, y.shape[1], total, BLOCK=1024, num_warps=4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the sweep's database")
    ap.add_argument("--only", action="append", default=[], help="operator(s) to run (default: all)")
    ap.add_argument("--out", help="Markdown table (default: stdout)")
    ap.add_argument("--csv")
    ap.add_argument("--profile", action="store_true",
                    help="call each side once a size for a profiler; no timing and no table")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("ops_vs_torch: no CUDA device", file=sys.stderr)
        return 3
    import ktune

    rt = ktune.Runtime(db=args.db, on_miss="default")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    dt = torch.bfloat16
    stream_of = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    compiled = {"rmsnorm": torch.compile(eager_rmsnorm, fullgraph=True),
                "softmax": torch.compile(eager_softmax, fullgraph=True),
                "swiglu": torch.compile(eager_swiglu, fullgraph=True)}
    rows = []
    for op, dims in SIZES:
        if args.only and op not in args.only:
            continue
        gen = torch.Generator(device="cuda").manual_seed(sum(dims.values()))

        def randn(*shape):
            return torch.randn(*shape, device="cuda", dtype=torch.float32, generator=gen).to(dt)

        if op == "rmsnorm":
            r, h = dims["rows"], dims["hidden"]
            in_shape, out_shape, moved = (r, h), (r, h), 2 * (2 * r * h + h)
        elif op == "softmax":
            r, c = dims["rows"], dims["cols"]
            in_shape, out_shape, moved = (r, c), (r, c), 2 * (2 * r * c)
        else:
            m, i = dims["m"], dims["i"]
            in_shape, out_shape, moved = (m, 2 * i), (m, i), 2 * (3 * m * i)
        count = 1 if args.profile else max(1, min(16, math.ceil(2 * l2 / moved)))
        w = randn(in_shape[1]) if op == "rmsnorm" else None
        sets = [(randn(*in_shape), torch.empty(*out_shape, device="cuda", dtype=dt)) for _ in range(count)]
        if op == "rmsnorm":
            info = rt.prepare_rmsnorm(sets[0][0], w, sets[0][1], eps=EPS)
            ours = lambda j: rt.rmsnorm(sets[j][0], w, sets[j][1], eps=EPS, stream=stream_of())  # noqa: E731
            eager = lambda j: eager_rmsnorm(sets[j][0], w)  # noqa: E731
            comp = lambda j: compiled[op](sets[j][0], w)  # noqa: E731
            trit = lambda j: triton_rmsnorm(sets[j][0], w, sets[j][1])  # noqa: E731
        elif op == "softmax":
            info = rt.prepare_softmax(sets[0][0], sets[0][1])
            ours = lambda j: rt.softmax(sets[j][0], sets[j][1], stream=stream_of())  # noqa: E731
            eager = lambda j: eager_softmax(sets[j][0])  # noqa: E731
            comp = lambda j: compiled[op](sets[j][0])  # noqa: E731
            trit = lambda j: triton_softmax(sets[j][0], sets[j][1])  # noqa: E731
        else:
            info = rt.prepare_swiglu(x=sets[0][0], out=sets[0][1])
            ours = lambda j: rt.swiglu(x=sets[j][0], out=sets[j][1], stream=stream_of())  # noqa: E731
            eager = lambda j: eager_swiglu(sets[j][0])  # noqa: E731
            comp = lambda j: compiled[op](sets[j][0])  # noqa: E731
            trit = lambda j: triton_swiglu(sets[j][0], sets[j][1])  # noqa: E731
        for j in range(count):
            comp(j)  # compiled before capture
        torch.cuda.synchronize()
        sides = {"ktune": ours, "eager": eager, "compile": comp, "triton": trit}
        if args.profile:
            for name in ("ktune", "compile", "triton"):
                sides[name](0)
            torch.cuda.synchronize()
            print(f"{op} {dims}: one call of ktune ({info.config_name}), compile and triton", file=sys.stderr)
            del sets
            torch.cuda.empty_cache()
            continue
        best = {k: float("inf") for k in sides}
        for _ in range(2):  # alternate, keep each side's faster round
            for name, fn in sides.items():
                best[name] = min(best[name], time_graph(fn, sets))
        want = eager(0).float()
        errs = {}
        for name in ("ktune", "triton"):
            sides[name](0)
            torch.cuda.synchronize()
            errs[name] = ((sets[0][1].float() - want).norm() / want.norm().clamp_min(1e-30)).item()
        errs["compile"] = ((comp(0).float() - want).norm() / want.norm().clamp_min(1e-30)).item()
        shape = ",".join(f"{k}={v}" for k, v in dims.items())
        row = dict(op=op, shape=shape, config=info.config_name, source=info.source,
                   **{f"{k}_us": v for k, v in best.items()},
                   **{f"{k}_gbs": moved / v / 1e3 for k, v in best.items()},
                   **{f"{k}_ratio": v / best["ktune"] for k, v in best.items() if k != "ktune"},
                   **{f"{k}_err": v for k, v in errs.items()})
        rows.append(row)
        print(f"{op} {shape}: " + ", ".join(f"{k} {v:.2f} us" for k, v in best.items()) + f" {info.config_name}",
              file=sys.stderr)
        del sets
        torch.cuda.empty_cache()

    if args.profile:
        return 0
    lines = ["Memory-bound operators, bf16, graph-replayed with rotated inputs (ratio = other / ktune; above 1: "
             "ktune faster; GB/s = bytes read and written once / time)", "",
             "| op | shape | ktune us (GB/s) | eager us | compile us | triton us | vs eager | vs compile "
             "| vs triton | ktune config | worst rel err |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        err = max(r["ktune_err"], r["compile_err"], r["triton_err"])
        lines.append(f"| {r['op']} | {r['shape']} | {r['ktune_us']:.2f} ({r['ktune_gbs']:.0f}) | {r['eager_us']:.2f} "
                     f"| {r['compile_us']:.2f} ({r['compile_gbs']:.0f}) | {r['triton_us']:.2f} ({r['triton_gbs']:.0f}) "
                     f"| {r['eager_ratio']:.2f} | {r['compile_ratio']:.2f} | {r['triton_ratio']:.2f} "
                     f"| {r['config']} | {err:.1e} |")
    write_results(lines, rows, args.out, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
