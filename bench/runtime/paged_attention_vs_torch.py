#!/usr/bin/env python3
"""ktune's decode attention over a paged KV cache against the same attention over a contiguous
cache (ktune's and torch SDPA's), all replayed in CUDA graphs with rotated inputs.

For the heads of three decoders (Qwen2.5-0.5B 14/2 of 64, Llama-3.2-1B 32/8 of 64, Qwen3-0.6B 16/8
of 128) at batch 1 and 8 and contexts of 1K and 8K keys, one bf16 cache of random values is laid out
twice: contiguous [batch, heads_kv, seq, d], and paged, its blocks of 16 (and 64) keys shuffled
through one pool [num_blocks, heads_kv, block, d] with an int32 block table. The rotated input sets
share one block table (each set's pool shuffled the same way), as a served model's layers share the
step's table: a graph of a decode step reads it cold once, in its first layer, and from L2 after.
This times
  ktune:       ktune.Runtime.decode_attention on the contiguous cache (the contiguous key's winner),
  ktune paged: the same call with block_table (the paged key's winner; one plan serves any block),
  torch:       F.scaled_dot_product_attention(q [batch, heads_q, 1, d], k, v, enable_gqa=True) on the
               contiguous cache, as a model calls it,
  ktune paged in order: the paged call on a pool whose blocks of 16 lie in sequence order (the
               table counts up): the paged kernel's own cost apart from the shuffled pool's,
the same way (side_by_side.time_graph), checks every output against SDPA's and writes a Markdown
table: microseconds, paged / contiguous (the target: at most 1.05 at block >= 16) and
torch / paged (above 1: ktune's paged attention is faster than SDPA on the contiguous cache).

    python3 bench/runtime/paged_attention_vs_torch.py --db sweep.db [--out table.md] [--csv t.csv]
    python3 bench/runtime/paged_attention_vs_torch.py --print-keys > keys.txt   # the keys it times

With --profile it calls each of ktune's sides once a shape (contiguous, paged 16, paged 64, paged 16
in order; one input set, no graphs, no timing, no table) for a profiler (ncu) to read, and names
the order on stderr.
"""

import argparse
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

# (model, heads_q, heads_kv, head_dim)
MODELS = [("qwen2.5-0.5b", 14, 2, 64), ("llama3.2-1b", 32, 8, 64), ("qwen3-0.6b", 16, 8, 128)]
BATCHES, CONTEXTS, BLOCKS = (1, 8), (1024, 8192), (16, 64)


def cases():
    for model, hq, hk, d in MODELS:
        for batch in BATCHES:
            for seq in CONTEXTS:
                yield dict(model=model, hq=hq, hk=hk, d=d, batch=batch, seq=seq)


def key_lines(c):
    shape = f"batch={c['batch']},heads_q={c['hq']},heads_kv={c['hk']},seq={c['seq']},head_dim={c['d']}"
    return [f"decode_attention {shape} bf16", f"decode_attention {shape} bf16 paged"]


def paged_copy(k, v, block, where, table):
    """k, v [batch, heads_kv, seq, d] as a pool of blocks shuffled by `where` (a permutation of the
    batch * seq / block blocks), and `table` (that permutation as the int32 block table)."""
    batch, hk, seq, d = k.shape
    per_seq = seq // block

    def pool(x):
        blocks = x.view(batch, hk, per_seq, block, d).transpose(1, 2).reshape(batch * per_seq, hk, block, d)
        out = torch.empty(blocks.shape, dtype=blocks.dtype, device=blocks.device)  # contiguous
        out[where] = blocks
        return out

    return pool(k), pool(v), table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="the sweep's database")
    ap.add_argument("--out", help="Markdown table (default: stdout)")
    ap.add_argument("--csv")
    ap.add_argument("--print-keys", action="store_true", help="print the keys it times (for ktune tune --shapes)")
    ap.add_argument("--profile", action="store_true",
                    help="call each of ktune's sides once a shape for a profiler; no timing and no table")
    args = ap.parse_args()
    if args.print_keys:
        print("# decode_attention keys of bench/runtime/paged_attention_vs_torch.py (contiguous and paged)")
        for c in cases():
            print("\n".join(key_lines(c)))
        return 0
    global torch
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402

    from side_by_side import geomean, open_runtime, time_graph, write_results  # noqa: E402
    rt = open_runtime("paged_attention_vs_torch", ap, args.db)
    if rt is None:
        return 3
    stream_of = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    for c in cases():
        batch, hq, hk, d, seq = c["batch"], c["hq"], c["hk"], c["d"], c["seq"]
        gen = torch.Generator(device="cuda").manual_seed(batch * 7919 + seq * 31 + hq)

        def randn(*shape):
            return torch.randn(*shape, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)

        kv_bytes = 2 * batch * hk * seq * d * 2
        count = 1 if args.profile else max(1, min(16, math.ceil(2 * l2 / kv_bytes)))
        sets = []
        shuffles = {b: torch.randperm(batch * seq // b, device="cuda", generator=gen) for b in BLOCKS}
        in_order = torch.arange(batch * seq // BLOCKS[0], device="cuda")
        ordered_table = in_order.view(batch, seq // BLOCKS[0]).to(torch.int32).contiguous()
        tables = {b: w.view(batch, seq // b).to(torch.int32).contiguous() for b, w in shuffles.items()}
        for _ in range(count):
            q, k, v = randn(batch, hq, d), randn(batch, hk, seq, d), randn(batch, hk, seq, d)
            paged = {b: paged_copy(k, v, b, shuffles[b], tables[b]) for b in BLOCKS}
            paged["ordered"] = paged_copy(k, v, BLOCKS[0], in_order, ordered_table)
            sets.append(dict(q=q, k=k, v=v, paged=paged, o=torch.empty_like(q),
                             po={b: torch.empty_like(q) for b in (*BLOCKS, "ordered")}))
        s0 = sets[0]
        info = rt.prepare_decode_attention(s0["q"], s0["k"], s0["v"], s0["o"])
        pk, pv, table = s0["paged"][BLOCKS[0]]
        paged_info = rt.prepare_decode_attention(s0["q"], pk, pv, s0["po"][BLOCKS[0]], block_table=table)

        def contiguous(i):
            s = sets[i]
            rt.decode_attention(s["q"], s["k"], s["v"], s["o"], stream=stream_of())

        def paged_side(block):
            def call(i):
                s = sets[i]
                k_pool, v_pool, tab = s["paged"][block]
                rt.decode_attention(s["q"], k_pool, v_pool, s["po"][block], block_table=tab, stream=stream_of())
            return call

        def sdpa(i):
            s = sets[i]
            return F.scaled_dot_product_attention(s["q"].unsqueeze(2), s["k"], s["v"], enable_gqa=True)

        sides = {"ktune": contiguous, **{f"paged{b}": paged_side(b) for b in (*BLOCKS, "ordered")}, "torch": sdpa}
        if args.profile:
            order = [name for name in sides if name != "torch"]
            for name in order:
                sides[name](0)
                torch.cuda.synchronize()
            print(f"{c['model']} batch={batch} seq={seq}: one call of each of {', '.join(order)} "
                  f"({info.config_name}; {paged_info.config_name})", file=sys.stderr)
            continue
        best = {name: float("inf") for name in sides}
        for _ in range(2):  # alternate, keep each side's faster round
            for name, fn in sides.items():
                best[name] = min(best[name], time_graph(fn, sets))
        for name, fn in sides.items():
            if name != "torch":
                fn(0)
        want = sdpa(0).squeeze(2).float()
        torch.cuda.synchronize()
        outs = {"ktune": s0["o"], **{f"paged{b}": s0["po"][b] for b in (*BLOCKS, "ordered")}}
        err = max(((o.float() - want).norm() / want.norm()).item() for o in outs.values())
        shape = f"batch={batch},heads_q={hq},heads_kv={hk},seq={seq},head_dim={d}"
        row = dict(model=c["model"], shape=shape, **{f"{k}_us": v for k, v in best.items()},
                   **{f"paged{b}_vs_contiguous": best[f"paged{b}"] / best["ktune"] for b in (*BLOCKS, "ordered")},
                   torch_vs_paged16=best["torch"] / best[f"paged{BLOCKS[0]}"],
                   config=info.config_name, paged_config=paged_info.config_name, source=info.source,
                   paged_source=paged_info.source, rel_err=err)
        rows.append(row)
        print(f"{c['model']} {shape}: " + ", ".join(f"{k} {v:.2f} us" for k, v in best.items())
              + f" ({info.config_name}; {paged_info.config_name}) err {err:.1e}", file=sys.stderr)
        del sets
        torch.cuda.empty_cache()

    if args.profile:
        return 0
    b0, b1 = BLOCKS
    lines = ["decode attention bf16 over a paged KV cache, graph-replayed with rotated inputs (paged / contiguous: "
             "ktune's paged time over its contiguous time; torch / paged: SDPA on the contiguous cache over "
             f"ktune paged at block {b0}, above 1: ktune faster)", "",
             f"| model | shape | contiguous us | paged {b0} us | paged {b1} us | paged {b0} in order us | torch us "
             f"| paged {b0} / contiguous | paged {b1} / contiguous | in order / contiguous | torch / paged {b0} "
             "| contiguous config | paged config | source | rel err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['shape']} | {r['ktune_us']:.2f} | {r[f'paged{b0}_us']:.2f} "
                     f"| {r[f'paged{b1}_us']:.2f} | {r['pagedordered_us']:.2f} | {r['torch_us']:.2f} "
                     f"| {r[f'paged{b0}_vs_contiguous']:.3f} | {r[f'paged{b1}_vs_contiguous']:.3f} "
                     f"| {r['pagedordered_vs_contiguous']:.3f} | {r['torch_vs_paged16']:.2f} | {r['config']} "
                     f"| {r['paged_config']} | {r['paged_source']} | {r['rel_err']:.1e} |")
    lines += ["", f"geomean paged {b0} / contiguous: {geomean([r[f'paged{b0}_vs_contiguous'] for r in rows]):.3f}, "
              f"paged {b1} / contiguous: {geomean([r[f'paged{b1}_vs_contiguous'] for r in rows]):.3f}, "
              f"paged {b0} in order / contiguous: {geomean([r['pagedordered_vs_contiguous'] for r in rows]):.3f}, "
              f"torch / paged {b0}: {geomean([r['torch_vs_paged16'] for r in rows]):.3f} ({len(rows)} shapes); "
              f"worst rel err against SDPA: {max((r['rel_err'] for r in rows), default=0):.1e}"]
    write_results(lines, rows, args.out, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
