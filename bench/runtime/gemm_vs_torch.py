#!/usr/bin/env python3
"""ktune's tuned GEMMs against torch's cuBLAS call, both replayed in CUDA graphs with rotated inputs.

For every key of a shape set (kernel gemm, one dtype, layout nt: C = A @ W^T with W an nn.Linear
weight; with --dtype fp8, kernel fp8_gemm: e4m3 A and W, per-tensor scales, bf16 C), on a GPU,
this times
  ktune: ktune.Runtime.gemm / fp8_gemm served from DB (the sweep's winner: a template config or a
         cuBLASLt algorithm; the plan says which),
  torch: torch.mm(A, W.t(), out=C) (cuBLAS, as a model calls it), or for fp8
         torch._scaled_mm(A, W.t(), scale_a, scale_b, out_dtype=bfloat16) (cuBLASLt fp8),
the same way: R copies of (A, W, C) together larger than twice the L2 (so no call finds its inputs
in the cache: what a model that reads each layer's weights once per step pays), one CUDA graph of
N calls rotating over the copies, replayed; microseconds a call = replay time / N, median of 5
replays. The two sides alternate (ktune, torch, ktune, torch) and each keeps its faster round, so
neither pays for clocks still ramping up after the previous key. It checks that ktune's C matches torch's, and writes a Markdown table (ratio = torch /
ktune: above 1 means ktune is faster) with geomeans by M and how many keys a template and a
library algorithm won.

    python3 bench/runtime/gemm_vs_torch.py --db sweep.db --shapes qwen3-0.6b [--m 1,16,128]
        [--dtype bf16] [--out table.md] [--csv table.csv]

With --profile it calls each side once a key after a warm-up call, inside NVTX ranges "ktune" and
"torch" (one input set, no graphs, no timing, no table), for a profiler to read every kernel each
call launches:
    ncu --nvtx --nvtx-include "ktune/" --nvtx-include "torch/" --metrics ... python3 ... --profile
"""

import argparse
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

try:
    import tomllib
except ImportError:  # Python < 3.11
    import toml as tomllib  # type: ignore

import torch  # noqa: E402

from side_by_side import geomean, time_graph, write_results  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "fp8": torch.float8_e4m3fn}


def shape_set(name):
    path = pathlib.Path(name)
    if not path.exists():
        path = ROOT / "configs" / "shapes" / f"{name}.toml"
    text = path.read_text()
    data = tomllib.loads(text)
    # The set is named by its model (a file path would name the machine it ran on).
    return (data["sweep"]["m"], [(layer["name"], layer["n"], layer["k"]) for layer in data["layer"]],
            data.get("model", path.stem))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the sweep's database")
    ap.add_argument("--shapes", required=True, help="a shape set name (configs/shapes) or file")
    ap.add_argument("--m", help="comma list of M (default: the set's sweep)")
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--out", help="Markdown table (default: stdout)")
    ap.add_argument("--csv")
    ap.add_argument("--profile", action="store_true",
                    help="one call of each side a key in NVTX ranges, for a profiler; no timing, no table")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("gemm_vs_torch: no CUDA device", file=sys.stderr)
        return 3
    import ktune

    ms, layers, model = shape_set(args.shapes)
    if args.m:
        ms = [int(x) for x in args.m.split(",")]
    dt = DTYPES[args.dtype]
    rt = ktune.Runtime(db=args.db, on_miss="default")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    for m in ms:
        for name, n, k in layers:
            fp8 = args.dtype == "fp8"
            out_dt = torch.bfloat16 if fp8 else dt
            in_bytes = 1 if fp8 else torch.finfo(dt).bits // 8
            per_set = (m * k + n * k) * in_bytes + m * n * torch.finfo(out_dt).bits // 8
            count = 1 if args.profile else max(2, min(64, math.ceil(2 * l2 / per_set)))
            gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n * 31 + k)

            def operand(rows):
                x = torch.randn(rows, k, device="cuda", dtype=torch.float32, generator=gen)
                return x.to(dt) if fp8 else (x / math.sqrt(k) if rows == n else x).to(dt)

            sets = [(operand(m), operand(n), torch.empty(m, n, device="cuda", dtype=out_dt),
                     torch.empty(m, n, device="cuda", dtype=out_dt)) for _ in range(count)]
            stream_of = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
            if fp8:
                sa = torch.tensor([0.5], device="cuda")
                sb = torch.tensor([1.0 / math.sqrt(k)], device="cuda")
                info = rt.prepare_fp8_gemm(sets[0][0], sets[0][1], sa, sb, sets[0][2])
                ours = lambda i: rt.fp8_gemm(sets[i][0], sets[i][1], sa, sb, sets[i][2], stream=stream_of())  # noqa: E731
                # its output is allocated in the graph's pool at capture: nothing at replay
                theirs = lambda i: torch._scaled_mm(  # noqa: E731
                    sets[i][0], sets[i][1].t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
            else:
                info = rt.prepare_gemm(sets[0][0], sets[0][1], sets[0][2])
                ours = lambda i: rt.gemm(sets[i][0], sets[i][1], sets[i][2], stream=stream_of())  # noqa: E731
                theirs = lambda i: torch.mm(sets[i][0], sets[i][1].t(), out=sets[i][3])  # noqa: E731
            if args.profile:
                ours(0)
                theirs(0)
                torch.cuda.synchronize()
                for side, fn in (("ktune", ours), ("torch", theirs)):
                    torch.cuda.nvtx.range_push(side)
                    fn(0)
                    torch.cuda.synchronize()
                    torch.cuda.nvtx.range_pop()
                print(f"m={m} n={n} k={k} {name}: one call of each ({info.config_name})", file=sys.stderr)
                del sets
                torch.cuda.empty_cache()
                continue
            ktune_us, torch_us = float("inf"), float("inf")
            for _ in range(2):
                ktune_us = min(ktune_us, time_graph(ours, sets))
                torch_us = min(torch_us, time_graph(theirs, sets))
            a, w, c, ref = sets[0]
            ours(0)
            got = theirs(0)
            if fp8:
                ref.copy_(got)
            torch.cuda.synchronize()
            err = ((c.float() - ref.float()).norm() / ref.float().norm().clamp_min(1e-30)).item()
            source = "library" if ".cublaslt." in info.config_name else (
                "template" if info.source == "tuned" else info.source)
            rows.append(dict(m=m, n=n, k=k, layer=name, torch_us=torch_us, ktune_us=ktune_us,
                             ratio=torch_us / ktune_us, config=info.config_name, source=source, rel_err=err))
            print(f"m={m} n={n} k={k} {name}: torch {torch_us:.2f} us, ktune {ktune_us:.2f} us "
                  f"({torch_us / ktune_us:.2f}x) {info.config_name} err {err:.1e}", file=sys.stderr)


    if args.profile:
        return 0
    lines = [f"{'fp8_gemm e4m3 per-tensor' if args.dtype == 'fp8' else 'GEMM ' + args.dtype} nt, {model}, graph-replayed with rotated inputs "
             f"(ratio = torch / ktune; above 1: ktune faster)", "",
             "| m | n | k | layer | torch (cuBLAS) us | ktune us | ratio | ktune config | source | rel err |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['m']} | {r['n']} | {r['k']} | {r['layer']} | {r['torch_us']:.2f} | {r['ktune_us']:.2f} "
                     f"| {r['ratio']:.2f} | {r['config']} | {r['source']} | {r['rel_err']:.1e} |")
    small = [r["ratio"] for r in rows if r["m"] <= 16]
    large = [r["ratio"] for r in rows if r["m"] >= 32]
    lines += ["", f"geomean M <= 16: {geomean(small):.3f} ({len(small)} keys); "
              f"M >= 32: {geomean(large):.3f} ({len(large)} keys); all: {geomean([r['ratio'] for r in rows]):.3f}",
              f"keys below 1.0: {sum(1 for r in rows if r['ratio'] < 1.0)} of {len(rows)}; "
              f"won by a template: {sum(1 for r in rows if r['source'] == 'template')}, "
              f"by a cuBLASLt algorithm: {sum(1 for r in rows if r['source'] == 'library')}, "
              f"untuned: {sum(1 for r in rows if r['source'] not in ('template', 'library'))}",
              f"worst rel err against torch: {max((r['rel_err'] for r in rows), default=0):.1e}"]
    write_results(lines, rows, args.out, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
