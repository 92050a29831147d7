#!/usr/bin/env python3
"""Decoder layers of four models written from ktune's operators, checked against the same layers
in torch, with every key the runtime serves recorded for `ktune tune --shapes`.

The models (random bf16 weights; nothing is downloaded), each a stack of --layers layers plus the
final norm and the LM head:
  qwen2.5-0.5b  hidden 896, 14 / 2 heads of 64, MLP 4864, biased q/k/v projections
  llama3.2-1b   hidden 2048, 32 / 8 heads of 64, MLP 8192, llama3-scaled rotary table
  qwen3-0.6b    hidden 1024, 16 / 8 heads of 128, MLP 3072, q/k RMSNorm before the rotation
  glm4-9b       hidden 4096, 32 / 2 heads of 128, MLP 13696, biased q/k/v, half of each head
                rotated in interleaved pairs (gptj style)
A layer, all from torch.ops.ktune: rmsnorm (with the residual add), the q, k and v projections
(gemm, +bias where the model has one), rope_append (RoPE, the q/k norm where the model has one,
and k and v written into a paged KV cache: blocks of 16, a shuffled block table), decode attention
over the paged cache, the o projection, rmsnorm (residual), the fused gate_up projection, swiglu,
the down projection; then the final norm and the LM head (gemm). Only the embedding look-up and
the prefill's attention (torch SDPA, causal, over the keys read back from the cache) are torch's.

Scenarios: a decode step of batch 1 and 8 (each sequence at its own position near 1000, its cache
filled with a random history) and a prefill of 128 and 1024 tokens (one sequence from position 0).
Each is checked against torch (F.linear, the RMSNorm and rotary math in float32, the cache written
through the block table, SDPA): the final hidden state, the logits and both caches within 2e-2
relative error.

    python3 examples/python/decoder_layers.py [--db PATH] [--models a,b] [--layers N]
                                              [--record DIR] [--json OUT]
--record DIR writes DIR/<model>.txt: every key the model's runtime served from something other
than the database's own winner (ktune.Runtime(record_misses=...)), one `KERNEL SHAPE DTYPE LAYOUT`
line each, the input of `ktune tune --shapes DIR/<model>.txt`; a run on a database that tuned
them records nothing. Needs torch with CUDA and libktune_runtime.so ($KTUNE_LIBRARY, a build tree
or an install). Exit 0 when every check passes, 1 when one fails, 3 without a GPU.
"""

import argparse
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

EPS, BLOCK, SEQ_MAX, TOLERANCE = 1e-6, 16, 2048, 2e-2
MODELS = {
    "qwen2.5-0.5b": dict(hidden=896, hq=14, hk=2, d=64, rot=64, inter=4864, vocab=151936, bias=True,
                         qk_norm=False, style="neox", theta=1e6, llama3=False),
    "llama3.2-1b": dict(hidden=2048, hq=32, hk=8, d=64, rot=64, inter=8192, vocab=128256, bias=False,
                        qk_norm=False, style="neox", theta=5e5, llama3=True),
    "qwen3-0.6b": dict(hidden=1024, hq=16, hk=8, d=128, rot=128, inter=3072, vocab=151936, bias=False,
                       qk_norm=True, style="neox", theta=1e6, llama3=False),
    "glm4-9b": dict(hidden=4096, hq=32, hk=2, d=128, rot=64, inter=13696, vocab=151552, bias=True,
                    qk_norm=False, style="gptj", theta=1e4, llama3=False),
}
# (name, sequences, tokens a sequence): decode steps and prefills
SCENARIOS = [("decode", 1, 1), ("decode", 8, 1), ("prefill", 1, 128), ("prefill", 1, 1024)]


def rotary_table(m):
    """cos then sin [SEQ_MAX, rot] (f32) of the model's frequencies (llama3's scaling in the table)."""
    rot = m["rot"]
    inv = 1.0 / (m["theta"] ** (torch.arange(0, rot, 2, dtype=torch.float64, device="cuda") / rot))
    if m["llama3"]:  # factor 32, low / high frequency factors 1 and 4, 8192 original positions
        factor, low, high, original = 32.0, 1.0, 4.0, 8192.0
        wavelen = 2 * math.pi / inv
        smooth = (original / wavelen - low) / (high - low)
        scaled = torch.where(wavelen > original / low, inv / factor, inv)
        medium = (wavelen <= original / low) & (wavelen >= original / high)
        inv = torch.where(medium, (1 - smooth) * inv / factor + smooth * inv, scaled)
    angle = torch.arange(SEQ_MAX, dtype=torch.float64, device="cuda")[:, None] * inv[None, :]
    return torch.cat([angle.cos(), angle.sin()], dim=1).float().contiguous()


class Model:
    """Random weights: projections std 0.02, biases std 0.02, norms near 1, embedding std 1."""

    def __init__(self, m, layers, seed=0):
        g = torch.Generator(device="cuda").manual_seed(seed)

        def randn(*shape, std=0.02):
            return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

        def norm(n):
            return (1 + 0.1 * torch.randn(n, generator=g, device="cuda")).to(torch.bfloat16)

        h, hq, hk, d, i = m["hidden"], m["hq"], m["hk"], m["d"], m["inter"]
        self.m = m
        self.embed = randn(m["vocab"], h, std=1.0)
        self.lm_head = randn(m["vocab"], h)
        self.final_norm = norm(h)
        self.cos_sin = rotary_table(m)
        self.layers = [dict(in_norm=norm(h), wq=randn(hq * d, h), wk=randn(hk * d, h), wv=randn(hk * d, h),
                            bq=randn(hq * d) if m["bias"] else None, bk=randn(hk * d) if m["bias"] else None,
                            bv=randn(hk * d) if m["bias"] else None,
                            q_norm=norm(d) if m["qk_norm"] else None, k_norm=norm(d) if m["qk_norm"] else None,
                            wo=randn(h, hq * d), post_norm=norm(h), w_gate_up=randn(2 * i, h), w_down=randn(h, i))
                       for _ in range(layers)]


class Cache:
    """Paged K and V caches of every layer: [layers, num_blocks, heads_kv, BLOCK, d] and the table
    int32 [sequences, SEQ_MAX / BLOCK] naming each sequence's blocks (shuffled over the pool)."""

    def __init__(self, m, layers, sequences, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        max_blocks = SEQ_MAX // BLOCK
        shape = (layers, sequences * max_blocks, m["hk"], BLOCK, m["d"])
        self.k = torch.randn(*shape, generator=g, device="cuda").to(torch.bfloat16)  # a random history
        self.v = torch.randn(*shape, generator=g, device="cuda").to(torch.bfloat16)
        perm = torch.randperm(sequences * max_blocks, generator=g, device="cuda")
        self.table = perm.view(sequences, max_blocks).to(torch.int32).contiguous()

    def clone(self):
        c = Cache.__new__(Cache)
        c.k, c.v, c.table = self.k.clone(), self.v.clone(), self.table
        return c

    def keys(self, layer, seq, count, which):
        """[heads_kv, count, d]: the first `count` rows of sequence seq's cache, in order."""
        pool = (self.k if which == "k" else self.v)[layer]
        blocks = pool[self.table[seq, : (count + BLOCK - 1) // BLOCK].long()]  # [n, hk, BLOCK, d]
        return blocks.transpose(0, 1).reshape(pool.shape[1], -1, pool.shape[3])[:, :count]


def prefill_attention(q, cache, layer, tokens):
    """Causal SDPA of one sequence's q [tokens, hq, d] over its keys read back from the cache."""
    k, v = cache.keys(layer, 0, tokens, "k"), cache.keys(layer, 0, tokens, "v")
    o = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k[None], v[None], is_causal=True, enable_gqa=True)
    return o[0].transpose(0, 1).reshape(tokens, -1).contiguous()


def ktune_forward(model, cache, h, pos, lens, per_seq):
    """The layers, final norm and LM head from torch.ops.ktune; h [tokens, hidden] embeddings."""
    ops, m = torch.ops.ktune, model.m
    n, hq, hk, d = h.shape[0], m["hq"], m["hk"], m["d"]
    residual = None
    for i, p in enumerate(model.layers):
        if residual is None:
            y, residual = ops.rmsnorm(h, p["in_norm"], EPS), h
        else:
            y, residual = ops.rmsnorm_residual(h, residual, p["in_norm"], EPS)
        epilogue = "bias" if m["bias"] else "none"
        q = ops.gemm(y, p["wq"], p["bq"], "nt", epilogue).view(n, hq, d)
        k = ops.gemm(y, p["wk"], p["bk"], "nt", epilogue).view(n, hk, d)
        v = ops.gemm(y, p["wv"], p["bv"], "nt", epilogue).view(n, hk, d)
        q = ops.rope_append(q, k, v, model.cos_sin, pos, cache.k[i], cache.v[i], p["q_norm"], p["k_norm"],
                            cache.table, per_seq, EPS, m["style"])
        if per_seq == 1:
            o = ops.decode_attention(q, cache.k[i], cache.v[i], lens, 0.0, cache.table).view(n, hq * d)
        else:
            o = prefill_attention(q, cache, i, per_seq)
        h = ops.gemm(o, p["wo"], None, "nt", "none")
        y, residual = ops.rmsnorm_residual(h, residual, p["post_norm"], EPS)
        h = ops.gemm(ops.swiglu(ops.gemm(y, p["w_gate_up"], None, "nt", "none")), p["w_down"], None, "nt", "none")
    y, _ = ops.rmsnorm_residual(h, residual, model.final_norm, EPS)
    last = y[per_seq - 1::per_seq].contiguous()  # each sequence's last token
    return y, ops.gemm(last, model.lm_head, None, "nt", "none")


def _rms(x, w):
    x32 = x.float()
    return x32 * torch.rsqrt((x32 * x32).mean(-1, keepdim=True) + EPS) * w.float()


def _rotate(x, cos_sin, pos, m):
    """RoPE of x [tokens, heads, d] (f32 in, f32 out): the first rot dims, neox halves or gptj pairs."""
    rot = m["rot"]
    row = cos_sin[pos.long()]
    cos, sin = row[:, None, : rot // 2], row[:, None, rot // 2:]
    xr, rest = x[..., :rot], x[..., rot:]
    if m["style"] == "gptj":
        a, b = xr[..., 0::2], xr[..., 1::2]
        out = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2)
    else:
        a, b = xr[..., : rot // 2], xr[..., rot // 2:]
        out = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
    return torch.cat((out, rest), dim=-1)


def torch_forward(model, cache, h, pos, lens, per_seq):
    """The same layers in torch: cuBLAS, float32 norms and rotation, SDPA over the gathered cache."""
    m = model.m
    n, hq, hk, d = h.shape[0], m["hq"], m["hk"], m["d"]
    bf = torch.bfloat16
    seqs = n // per_seq
    residual = None
    for i, p in enumerate(model.layers):
        residual = h if residual is None else h + residual
        y = _rms(residual, p["in_norm"]).to(bf)
        q = F.linear(y, p["wq"], p["bq"]).view(n, hq, d).float()
        k = F.linear(y, p["wk"], p["bk"]).view(n, hk, d).float()
        v = F.linear(y, p["wv"], p["bv"]).view(n, hk, d)
        if m["qk_norm"]:
            q, k = _rms(q, p["q_norm"]), _rms(k, p["k_norm"])
        q, k = _rotate(q, model.cos_sin, pos, m).to(bf), _rotate(k, model.cos_sin, pos, m).to(bf)
        seq = torch.arange(n, device="cuda") // per_seq
        blk = cache.table[seq, pos.long() // BLOCK].long()
        cache.k[i][blk, :, pos.long() % BLOCK] = k
        cache.v[i][blk, :, pos.long() % BLOCK] = v
        if per_seq == 1:
            o = torch.empty(n, hq, d, device="cuda", dtype=bf)
            for b in range(seqs):
                kb, vb = cache.keys(i, b, int(lens[b]), "k"), cache.keys(i, b, int(lens[b]), "v")
                o[b] = F.scaled_dot_product_attention(q[b][None, :, None], kb[None], vb[None],
                                                      enable_gqa=True)[0, :, 0]
            o = o.view(n, hq * d)
        else:
            o = prefill_attention(q, cache, i, per_seq)
        h = F.linear(o, p["wo"])
        residual = h + residual
        y = _rms(residual, p["post_norm"]).to(bf)
        gu = F.linear(y, p["w_gate_up"]).float()
        h = F.linear((F.silu(gu[:, : m["inter"]]) * gu[:, m["inter"]:]).to(bf), p["w_down"])
    y = _rms(h + residual, model.final_norm).to(bf)
    return y, F.linear(y[per_seq - 1::per_seq], model.lm_head)


def _rel(a, b):
    a, b = a.float(), b.float()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def run_scenario(model, layers, scenario, seqs, per_seq):
    """Both forwards on the same inputs and caches; the worst relative error of what they produce."""
    n = seqs * per_seq
    g = torch.Generator(device="cuda").manual_seed(n * 131 + per_seq)
    tokens = torch.randint(0, model.m["vocab"], (n,), generator=g, device="cuda")
    if scenario == "decode":
        pos = (1000 + 37 * torch.arange(seqs, device="cuda")).to(torch.int32)
    else:
        pos = torch.arange(per_seq, device="cuda", dtype=torch.int32)
    lens = (pos + 1).to(torch.int32) if scenario == "decode" else None
    cache = Cache(model.m, layers, seqs, seed=n)
    ref_cache = cache.clone()
    h = model.embed[tokens]
    y, logits = ktune_forward(model, cache, h, pos, lens, per_seq)
    ry, rlogits = torch_forward(model, ref_cache, h, pos, lens, per_seq)
    torch.cuda.synchronize()
    # The rows this step wrote (every layer): block table[seq, pos / BLOCK], row pos % BLOCK.
    seq = torch.arange(n, device="cuda") // per_seq
    blk, row = cache.table[seq, pos.long() // BLOCK].long(), pos.long() % BLOCK
    written = {f"{w}_cache": _rel(getattr(cache, w)[:, blk, :, row], getattr(ref_cache, w)[:, blk, :, row])
               for w in ("k", "v")}
    return dict(hidden=_rel(y, ry), logits=_rel(logits, rlogits), **written)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="ktune database (default: $KTUNE_DB); without winners the defaults serve")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, of: " + ", ".join(MODELS))
    ap.add_argument("--layers", type=int, default=2, help="decoder layers a model (default 2)")
    ap.add_argument("--record", metavar="DIR", help="write DIR/<model>.txt: the keys each model's runtime missed")
    ap.add_argument("--json", help="write the checks as JSON here")
    args = ap.parse_args()
    names = args.models.split(",")
    unknown = [x for x in names if x not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    if args.layers < 1:
        ap.error("--layers takes a positive integer")
    if not torch.cuda.is_available():
        print("decoder_layers: no CUDA device (torch sees none)", file=sys.stderr)
        return 3
    import ktune
    import ktune.torch as kt

    if args.record:
        pathlib.Path(args.record).mkdir(parents=True, exist_ok=True)
    rows, ok = [], True
    for name in names:
        record = str(pathlib.Path(args.record) / f"{name}.txt") if args.record else None
        if record:
            pathlib.Path(record).write_text("")
        rt = ktune.Runtime(db=args.db, record_misses=record)
        kt.use_runtime(rt)
        model = Model(MODELS[name], args.layers)
        for scenario, seqs, per_seq in SCENARIOS:
            errs = run_scenario(model, args.layers, scenario, seqs, per_seq)
            passed = all(e <= TOLERANCE for e in errs.values())
            ok &= passed
            rows.append(dict(model=name, scenario=f"{scenario} {seqs}x{per_seq}", passed=passed, **errs))
            print(f"{name} {scenario} {seqs}x{per_seq}: " + ", ".join(f"{k} {v:.1e}" for k, v in errs.items())
                  + ("" if passed else "  FAILED"), file=sys.stderr)
        rt.close()
        del model
        torch.cuda.empty_cache()
        if record:
            keys = [line for line in pathlib.Path(record).read_text().splitlines() if line and not line.startswith("#")]
            print(f"{name}: {len(keys)} keys recorded in {record}", file=sys.stderr)
            rows.append(dict(model=name, recorded_keys=len(keys)))
    print(f"torch {torch.__version__}, {args.layers} layers a model, bf16, paged KV cache (blocks of {BLOCK})")
    print("| model | scenario | hidden err | logits err | k cache err | v cache err | check |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "scenario" in r:
            print(f"| {r['model']} | {r['scenario']} | {r['hidden']:.1e} | {r['logits']:.1e} | {r['k_cache']:.1e} "
                  f"| {r['v_cache']:.1e} | {'ok' if r['passed'] else 'FAILED'} |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    print("checks:", "passed" if ok else f"FAILED (an error above {TOLERANCE})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
