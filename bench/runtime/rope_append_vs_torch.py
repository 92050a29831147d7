#!/usr/bin/env python3
"""ktune's tuned rope_append (RoPE of q and k with the KV-cache append of k and v, one launch)
against what a PyTorch user writes instead, both replayed in CUDA graphs with rotated inputs.

For four decoders' heads (Qwen2.5-0.5B, Llama-3.2-1B, Qwen3-0.6B with its q/k RMSNorm, GLM-4-9B with
half of each head rotated in interleaved pairs) at decode (batch 1 and 8, contiguous and paged
caches, each sequence at its own position near 1000) and prefill (one sequence of 1024 tokens), this
times
  ktune:   ktune.Runtime.rope_append served from DB (the sweep's winner),
  eager:   the same math in torch as a serving engine writes it: cos/sin gathered from a
           precomputed table by position, rotate-half (or interleaved) in f32, the cache written by
           advanced indexing (through the block table when paged),
  compile: that function through torch.compile (mode max-autotune-no-cudagraphs, fullgraph),
the same way (side_by_side.time_graph). Each side's q and both caches are checked against eager's.
Writes a Markdown table: microseconds and the ratio other / ktune (above 1: ktune faster).

    python3 bench/runtime/rope_append_vs_torch.py --db sweep.db [--out table.md] [--csv t.csv]
    python3 bench/runtime/rope_append_vs_torch.py --print-keys > keys.txt   # the keys it times
"""

import argparse
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

EPS = 1e-6
CONTEXT = 1000  # positions of the decode sequences: around here
SEQ_MAX, BLOCK = 2048, 16
# (model, heads_q, heads_kv, head_dim, rot_dim, style, q/k norm)
MODELS = [("qwen2.5-0.5b", 14, 2, 64, 64, "neox", False), ("llama3.2-1b", 32, 8, 64, 64, "neox", False),
          ("qwen3-0.6b", 16, 8, 128, 128, "neox", True), ("glm4-9b", 32, 2, 128, 64, "gptj", False)]
# (scenario, sequences, tokens a sequence, paged)
SCENARIOS = [("decode", 1, 1, False), ("decode", 8, 1, False), ("decode", 8, 1, True), ("prefill", 1, 1024, False)]


def cases():
    for model, hq, hk, d, rot, style, norm in MODELS:
        for scenario, seqs, per_seq, paged in SCENARIOS:
            mode = style + ("+norm" if norm else "") + ("+paged" if paged else "")
            yield dict(model=model, hq=hq, hk=hk, d=d, rot=rot, style=style, norm=norm, scenario=scenario,
                       seqs=seqs, per_seq=per_seq, paged=paged, tokens=seqs * per_seq, mode=mode)


def key_line(c):
    return (f"rope_append tokens={c['tokens']},heads_q={c['hq']},heads_kv={c['hk']},head_dim={c['d']},"
            f"rot_dim={c['rot']} bf16 {c['mode']}")


def torch_rope_append(q, k, v, cos_sin, pos, k_cache, v_cache, q_w, k_w, block_table, seq_tokens: int,
                      gptj: bool):
    """The op in torch: returns q rotated; writes k (rotated) and v into the caches."""
    t, _, d = q.shape
    rot = cos_sin.shape[1]
    if q_w is not None:
        qf, kf = q.float(), k.float()
        q = (qf * torch.rsqrt(qf.pow(2).mean(-1, keepdim=True) + EPS) * q_w.float()).to(q.dtype)
        k = (kf * torch.rsqrt(kf.pow(2).mean(-1, keepdim=True) + EPS) * k_w.float()).to(k.dtype)
    row = cos_sin[pos.long()]
    cos, sin = row[:, None, : rot // 2], row[:, None, rot // 2:]

    def rotate(x):
        xf = x.float()
        xr, xp = xf[..., :rot], xf[..., rot:]
        if gptj:
            a, b = xr[..., 0::2], xr[..., 1::2]
            out = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2)
        else:
            a, b = xr[..., : rot // 2], xr[..., rot // 2:]
            out = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
        return torch.cat((out, xp), dim=-1).to(x.dtype)

    q_out, k_rot = rotate(q), rotate(k)
    seq = torch.arange(t, device=q.device) // seq_tokens
    p = pos.long()
    if block_table is None:
        blk, r = seq, p % k_cache.shape[2]
    else:
        blk = block_table[seq, (p // k_cache.shape[2]) % block_table.shape[1]].long()
        r = p % k_cache.shape[2]
    k_cache[blk, :, r] = k_rot
    v_cache[blk, :, r] = v
    return q_out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="the sweep's database")
    ap.add_argument("--out", help="Markdown table (default: stdout)")
    ap.add_argument("--csv")
    ap.add_argument("--print-keys", action="store_true", help="print the keys it times (for ktune tune --shapes)")
    args = ap.parse_args()
    if args.print_keys:
        print("# rope_append keys of bench/runtime/rope_append_vs_torch.py")
        for c in cases():
            print(key_line(c))
        return 0
    global torch
    import torch  # noqa: E402

    from side_by_side import open_runtime, time_graph, write_results  # noqa: E402
    rt = open_runtime("rope_append_vs_torch", ap, args.db)
    if rt is None:
        return 3
    dt = torch.bfloat16
    stream_of = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    # One compiled graph a case (fixed shapes, as a graph-served model has): 16 cases pass dynamo's
    # default limit of 8 recompilations of one function.
    torch._dynamo.config.recompile_limit = 64
    compiled = torch.compile(torch_rope_append, mode="max-autotune-no-cudagraphs", fullgraph=True, dynamic=False)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    for c in cases():
        gen = torch.Generator(device="cuda").manual_seed(c["tokens"] * 7 + c["d"])

        def randn(*shape):
            return torch.randn(*shape, device="cuda", dtype=torch.float32, generator=gen).to(dt)

        t, hq, hk, d, rot = c["tokens"], c["hq"], c["hk"], c["d"], c["rot"]
        inv = 1.0 / (10000.0 ** (torch.arange(0, rot, 2, device="cuda", dtype=torch.float64) / rot))
        ang = torch.arange(SEQ_MAX + 1024, device="cuda", dtype=torch.float64)[:, None] * inv[None, :]
        cos_sin = torch.cat((ang.cos(), ang.sin()), dim=1).float().contiguous()
        if c["scenario"] == "prefill":
            pos = torch.arange(t, device="cuda", dtype=torch.int32)
        else:
            pos = (CONTEXT + 37 * torch.arange(t, device="cuda", dtype=torch.int32)) % SEQ_MAX
        q_w = randn(d) if c["norm"] else None
        k_w = randn(d) if c["norm"] else None
        if c["paged"]:
            max_blocks = SEQ_MAX // BLOCK
            perm = torch.randperm(c["seqs"] * max_blocks, device="cuda", generator=gen).to(torch.int32)
            block_table = perm.view(c["seqs"], max_blocks).contiguous()
            cache_shape = (c["seqs"] * max_blocks, hk, BLOCK, d)
        else:
            block_table = None
            cache_shape = (c["seqs"], hk, SEQ_MAX, d)
        moved = 2 * 2 * t * (hq + 2 * hk) * d
        count = max(2, min(16, math.ceil(2 * l2 / max(moved, 1))))
        sets = [(randn(t, hq, d), randn(t, hk, d), randn(t, hk, d), torch.empty(t, hq, d, device="cuda", dtype=dt))
                for _ in range(count)]
        caches = {name: (randn(*cache_shape), randn(*cache_shape)) for name in ("ktune", "eager", "compile")}
        kw = dict(q_weight=q_w, k_weight=k_w, block_table=block_table, seq_tokens=c["per_seq"], style=c["style"],
                  eps=EPS)

        def ours(j, kc=caches["ktune"][0], vc=caches["ktune"][1]):
            q, k, v, qo = sets[j]
            rt.rope_append(q, k, v, cos_sin, pos, kc, vc, q_out=qo, stream=stream_of(), **kw)

        def eager(j, kc=caches["eager"][0], vc=caches["eager"][1]):
            q, k, v, _ = sets[j]
            return torch_rope_append(q, k, v, cos_sin, pos, kc, vc, q_w, k_w, block_table, c["per_seq"],
                                     c["style"] == "gptj")

        def comp(j, kc=caches["compile"][0], vc=caches["compile"][1]):
            q, k, v, _ = sets[j]
            return compiled(q, k, v, cos_sin, pos, kc, vc, q_w, k_w, block_table, c["per_seq"],
                            c["style"] == "gptj")

        info = rt.prepare_rope_append(sets[0][0], sets[0][1], sets[0][2], cos_sin, pos, *caches["ktune"],
                                      q_out=sets[0][3], **kw)
        comp(0)  # compiled before capture
        torch.cuda.synchronize()
        sides = {"ktune": ours, "eager": eager, "compile": comp}
        best = {k: float("inf") for k in sides}
        for _ in range(2):  # alternate, keep each side's faster round
            for name, fn in sides.items():
                best[name] = min(best[name], time_graph(fn, sets))
        # Same inputs, fresh caches of the same values: every side's q and caches against eager's.
        for name in sides:
            for cache in caches[name]:
                cache.copy_(caches["eager"][0] if cache is caches[name][0] else caches["eager"][1])
        want_q = eager(0).float()
        errs = {}
        got = {"ktune": (ours(0), sets[0][3].float())[1], "compile": comp(0).float()}
        torch.cuda.synchronize()
        for name, q_side in got.items():
            e = ((q_side - want_q).norm() / want_q.norm()).item()
            for mine, theirs in zip(caches[name], caches["eager"]):
                e = max(e, ((mine.float() - theirs.float()).norm() / theirs.float().norm()).item())
            errs[name] = e
        shape = f"tokens={t},heads_q={hq},heads_kv={hk},head_dim={d},rot_dim={rot}"
        row = dict(model=c["model"], scenario=f"{c['scenario']} {c['seqs']}x{c['per_seq']}", mode=c["mode"],
                   shape=shape, config=info.config_name, source=info.source,
                   **{f"{k}_us": v for k, v in best.items()},
                   **{f"{k}_ratio": v / best["ktune"] for k, v in best.items() if k != "ktune"},
                   **{f"{k}_err": v for k, v in errs.items()})
        rows.append(row)
        print(f"{c['model']} {row['scenario']} {c['mode']}: " + ", ".join(f"{k} {v:.2f} us" for k, v in best.items())
              + f" {info.config_name} ({info.source})", file=sys.stderr)
        del sets, caches
        torch.cuda.empty_cache()

    lines = ["rope_append (RoPE + KV-cache append), bf16, graph-replayed with rotated inputs (ratio = other / "
             "ktune; above 1: ktune faster)", "",
             "| model | scenario | mode | ktune us | eager us | compile us | vs eager | vs compile | ktune config "
             "| worst rel err |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        err = max(r["ktune_err"], r["compile_err"])
        lines.append(f"| {r['model']} | {r['scenario']} | {r['mode']} | {r['ktune_us']:.2f} | {r['eager_us']:.2f} "
                     f"| {r['compile_us']:.2f} | {r['eager_ratio']:.2f} | {r['compile_ratio']:.2f} | {r['config']} "
                     f"| {err:.1e} |")
    write_results(lines, rows, args.out, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
