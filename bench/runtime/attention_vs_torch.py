#!/usr/bin/env python3
"""ktune's tuned decode attention against torch's scaled_dot_product_attention, both replayed in CUDA
graphs with rotated inputs.

For every key of a decode_attention shape set (one query token per sequence, a bf16 KV cache
[batch, heads_kv, seq, head_dim], grouped-query), on a GPU, this times
  ktune: ktune.Runtime.decode_attention served from DB (the sweep's winner; the plan names it),
  torch: F.scaled_dot_product_attention(q [batch, heads_q, 1, d], k, v, enable_gqa=True), as a
         model calls it (torch picks its backend),
the same way (side_by_side.time_graph): copies of (q, K, V, o) together larger than twice the L2
(one copy when the cache alone is larger), one CUDA graph of N calls rotating over them, replayed.
It checks that ktune's o matches torch's and writes a Markdown table (ratio = torch / ktune: above 1
means ktune is faster) with the KV cache's read rate (K and V bytes / time) of both.

    python3 bench/runtime/attention_vs_torch.py --db sweep.db --shapes decode_attention_llm
        [--batch 1,8] [--seq 1024,8192] [--out table.md] [--csv table.csv]

With --profile it calls each side once a key (one input set, no graphs, no timing, no table), for a
profiler (ncu) to read.
"""

import argparse
from collections import Counter
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
import torch.nn.functional as F  # noqa: E402

from side_by_side import geomean, time_graph, write_results  # noqa: E402


def template_of(config_name):
    """The template of a decode_attention config name: its third field for the tensor-core templates
    (decode_attention.bf16.mma.k16..., ...mma_cluster...), splitkv's names carry none (...bf16.n32...)."""
    fields = config_name.split(".")
    return fields[2] if len(fields) > 2 and fields[2].startswith("mma") else "splitkv"


def shape_set(name):
    path = pathlib.Path(name)
    if not path.exists():
        path = ROOT / "configs" / "shapes" / f"{name}.toml"
    data = tomllib.loads(path.read_text())
    if data.get("kernel") != "decode_attention":
        raise SystemExit(f"{path}: not a decode_attention shape set")
    sweep = data["sweep"]
    # The set is named by its model (a file path would name the machine it ran on).
    return (sweep["batch"], sweep["seq"],
            [(l["name"], l["heads_q"], l["heads_kv"], l["head_dim"]) for l in data["layer"]],
            data.get("model", path.stem))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the sweep's database")
    ap.add_argument("--shapes", required=True, help="a decode_attention shape set name (configs/shapes) or file")
    ap.add_argument("--batch", help="comma list of batch sizes (default: the set's sweep)")
    ap.add_argument("--seq", help="comma list of context lengths (default: the set's sweep)")
    ap.add_argument("--out", help="Markdown table (default: stdout)")
    ap.add_argument("--csv")
    ap.add_argument("--profile", action="store_true",
                    help="call each side once a key for a profiler; no timing and no table")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("attention_vs_torch: no CUDA device", file=sys.stderr)
        return 3
    import ktune

    batches, seqs, layers, model = shape_set(args.shapes)
    if args.batch:
        batches = [int(x) for x in args.batch.split(",")]
    if args.seq:
        seqs = [int(x) for x in args.seq.split(",")]
    rt = ktune.Runtime(db=args.db, on_miss="default")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    stream_of = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    rows = []
    for name, hq, hkv, d in layers:
        for batch in batches:
            for seq in seqs:
                kv_bytes = 2 * batch * hkv * seq * d * 2
                count = 1 if args.profile else max(1, min(32, math.ceil(2 * l2 / kv_bytes)))
                gen = torch.Generator(device="cuda").manual_seed(batch * 7919 + seq * 31 + hq)

                def randn(*shape):
                    return torch.randn(*shape, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)

                sets = [(randn(batch, hq, d), randn(batch, hkv, seq, d), randn(batch, hkv, seq, d),
                         torch.empty(batch, hq, d, device="cuda", dtype=torch.bfloat16)) for _ in range(count)]
                info = rt.prepare_decode_attention(sets[0][0], sets[0][1], sets[0][2], sets[0][3])
                ours = lambda i: rt.decode_attention(sets[i][0], sets[i][1], sets[i][2], sets[i][3],  # noqa: E731
                                                     stream=stream_of())
                theirs = lambda i: F.scaled_dot_product_attention(  # noqa: E731
                    sets[i][0].unsqueeze(2), sets[i][1], sets[i][2], enable_gqa=True)
                if args.profile:
                    ours(0)
                    theirs(0)
                    torch.cuda.synchronize()
                    print(f"{name} batch={batch} seq={seq}: one call of each ({info.config_name})", file=sys.stderr)
                    del sets
                    torch.cuda.empty_cache()
                    continue
                ktune_us, torch_us = float("inf"), float("inf")
                for _ in range(2):  # alternate, keep each side's faster round
                    ktune_us = min(ktune_us, time_graph(ours, sets))
                    torch_us = min(torch_us, time_graph(theirs, sets))
                ours(0)
                ref = theirs(0).squeeze(2)
                torch.cuda.synchronize()
                got = sets[0][3].float()
                err = ((got - ref.float()).norm() / ref.float().norm().clamp_min(1e-30)).item()
                rows.append(dict(layer=name, heads_q=hq, heads_kv=hkv, head_dim=d, batch=batch, seq=seq,
                                 torch_us=torch_us, ktune_us=ktune_us, ratio=torch_us / ktune_us,
                                 torch_tbs=kv_bytes / torch_us / 1e6, ktune_tbs=kv_bytes / ktune_us / 1e6,
                                 config=info.config_name, source=info.source, rel_err=err))
                print(f"{name} batch={batch} seq={seq}: torch {torch_us:.2f} us, ktune {ktune_us:.2f} us "
                      f"({torch_us / ktune_us:.2f}x) {info.config_name} err {err:.1e}", file=sys.stderr)
                del sets
                torch.cuda.empty_cache()


    if args.profile:
        return 0
    lines = [f"decode attention bf16, {model}, graph-replayed with rotated inputs "
             "(ratio = torch SDPA / ktune; above 1: ktune faster; TB/s = K and V bytes / time)", "",
             "| layer | heads q/kv | d | batch | context | torch us | ktune us | ratio | torch TB/s | ktune TB/s "
             "| ktune config | source | rel err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['layer']} | {r['heads_q']}/{r['heads_kv']} | {r['head_dim']} | {r['batch']} | {r['seq']} "
                     f"| {r['torch_us']:.2f} | {r['ktune_us']:.2f} | {r['ratio']:.2f} | {r['torch_tbs']:.2f} "
                     f"| {r['ktune_tbs']:.2f} | {r['config']} | {r['source']} | {r['rel_err']:.1e} |")
    lines += ["", f"geomean: {geomean([r['ratio'] for r in rows]):.3f} ({len(rows)} keys); "
              f"keys below 1.05: {sum(1 for r in rows if r['ratio'] < 1.05)}; "
              "won by " + ", ".join(f"{t}: {n}" for t, n in sorted(Counter(template_of(r["config"]) for r in rows).items())),
              f"worst rel err against torch: {max((r['rel_err'] for r in rows), default=0):.1e}"]
    write_results(lines, rows, args.out, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
