#!/usr/bin/env python3
"""A transformers model decoding through ktune.torch.optimize, end to end: record, tune, serve, time.

The model is a transformers class built from a config with a real model's shapes and random bf16
weights (nothing downloads): qwen2.5-0.5b (Qwen2ForCausalLM), llama3.2-1b (LlamaForCausalLM,
llama3 rotary scaling), qwen3-0.6b (Qwen3ForCausalLM). It decodes over transformers' StaticCache
after a prefill of --context tokens.

1. record: after a prefill, the optimized model (every key untuned) runs decode steps at each
   batch; every key it meets is written to DIR/keys.txt (record_misses);
2. tune: `ktune tune --shapes DIR/keys.txt --budget N` into --db (with --tune KTUNE_BIN);
3. serve and time each contender one decode step at the position after the prefill, the position
   advanced between steps, milliseconds a step (CUDA events); the two eager contenders of every
   batch first, in alternating rounds (the median round), then the compiled ones batch by batch:
     stock eager                       the model as transformers runs it
     stock compiled, graph             torch.compile(mode="max-autotune-no-cudagraphs") of the
                                       model (its call, hooks included), one step captured in a
                                       CUDA graph, replayed
     ktune eager                       ktune.torch.optimize(model) on the tuned database
     ktune compiled, graph             the optimized model compiled and captured the same way
   Correctness against stock eager at the same steps: the logits' relative error and the share of
   equal argmax tokens. The HBM floor of a step: the bytes of the weights (the LM head once) and of
   the KV cache read, at 4.8 TB/s and at this GPU's measured copy rate.

    python3 examples/python/hf_decode.py --model qwen2.5-0.5b [--db PATH] [--tune KTUNE_BIN]
        [--budget 8] [--batches 1,8] [--context 1024] [--steps 100] [--layers N] [--out DIR]
        [--phase all|tune|time] [--profile]
--phase tune stops after step 2 and --phase time starts at step 3 on the tuned --db (one run split
over two processes, e.g. two device calls).
--layers keeps the first N layers (a shorter run; the shapes are the model's). Needs torch with
CUDA, transformers and libktune_runtime.so. Exit 0 when every check passes (logits within 5e-2 and,
over at least 32 checked tokens, the same argmax on every decisive token: one whose eager top-1
leads its runner-up by more than DECISIVE_SIGMAS times the rms of the row's logit error, so rounding
alone cannot flip it; random weights give near-flat logits, so the plain agreement is reported but
rounding flips some tokens on any kernel), 1 when one fails, 3 without a GPU.
"""

import argparse
import copy
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402

MODELS = {
    "qwen2.5-0.5b": ("Qwen2", dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                                   num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                                   rope_theta=1e6, tie_word_embeddings=True, max_position_embeddings=32768)),
    "llama3.2-1b": ("Llama", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                                  num_attention_heads=32, num_key_value_heads=8, head_dim=64, vocab_size=128256,
                                  rope_theta=5e5, tie_word_embeddings=True, max_position_embeddings=131072,
                                  rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                                    high_freq_factor=4.0, original_max_position_embeddings=8192))),
    "qwen3-0.6b": ("Qwen3", dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                                 num_attention_heads=16, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                                 rope_theta=1e6, tie_word_embeddings=True, max_position_embeddings=40960)),
}
LOGITS_TOLERANCE, CHECK_TOKENS = 5e-2, 32
# the difference of two logits that each carry noise of rms s has rms s * sqrt(2): a lead over 6 s is
# over 4 of those (a Gaussian flip about once in 30,000 tokens)
DECISIVE_SIGMAS = 6.0


def check_steps_of(batch):
    """Steps whose logits are checked: at least 8, and CHECK_TOKENS argmax tokens in all."""
    return max(8, -(-CHECK_TOKENS // batch))


def build(name, layers):
    import transformers
    family, fields = MODELS[name]
    fields = dict(fields)
    if layers:
        fields["num_hidden_layers"] = layers
    config = getattr(transformers, f"{family}Config")(**fields)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = getattr(transformers, f"{family}ForCausalLM")(config)
    return model.to(torch.bfloat16).eval()


class Decoder:
    """A model, its static cache and a decode step at a position that advances between steps."""

    def __init__(self, model, batch, context, steps):
        import transformers
        self.model, self.batch, self.context = model, batch, context
        # the cache length is part of the attention key: the record and time phases size it alike
        self.checks = check_steps_of(batch)
        self.cache = transformers.StaticCache(config=model.config, max_cache_len=context + steps + self.checks + 8)
        g = torch.Generator(device="cuda").manual_seed(batch)
        prompt = torch.randint(0, model.config.vocab_size, (batch, context), generator=g, device="cuda")
        with torch.no_grad():
            model(input_ids=prompt, past_key_values=self.cache,
                  position_ids=torch.arange(context, device="cuda")[None].expand(batch, -1))
        self.token = torch.randint(0, model.config.vocab_size, (batch, 1), generator=g, device="cuda")
        self.pos = torch.full((batch, 1), context, device="cuda")
        self.forward = model  # called as a user calls it: its hooks run (ktune's converts a step's positions)
        self.logits = None

    def step(self):
        with torch.no_grad():
            self.logits = self.forward(input_ids=self.token, past_key_values=self.cache, position_ids=self.pos).logits
        return self.logits

    def advance(self):
        self.pos.add_(1)

    def rewind(self):
        """Back to the position after the prefill (the cache rows past it are rewritten anyway)."""
        self.pos.fill_(self.context)
        for layer in self.cache.layers:
            layer.cumulative_length.fill_(self.context)

    def capture(self):
        """One step captured in a CUDA graph (after warm-up steps on a side stream)."""
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                self.step()
                self.rewind()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.step()
        self.rewind()
        return graph


def time_ms(run, decoder, steps):
    for _ in range(3):
        run()
        decoder.advance()
    decoder.rewind()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        run()
        decoder.advance()
    end.record()
    end.synchronize()
    decoder.rewind()
    return start.elapsed_time(end) / steps


def kernel_profile(replay, decoder, steps=5):
    """The GPU kernels of one graph replay, from torch.profiler over STEPS replays: {name: [calls, us]} a step."""
    from torch.profiler import ProfilerActivity, profile
    replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            replay()
            decoder.advance()
        torch.cuda.synchronize()
    decoder.rewind()
    kernels = {}
    for e in prof.events():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if e.device_type == torch.autograd.DeviceType.CUDA and t > 0:
            k = kernels.setdefault(e.name, [0, 0.0])
            k[0] += 1
            k[1] += t
    return {name: [calls / steps, us / steps] for name, (calls, us) in kernels.items()}


def profile_table(profiles, top=25):
    """Markdown: each graph's kernel count and time a step, then the TOP kernels of each by time."""
    lines = []
    for label, kernels in profiles.items():
        calls = sum(c for c, _ in kernels.values())
        us = sum(t for _, t in kernels.values())
        lines += [f"### {label}: {calls:.0f} kernels, {us:.1f} us of kernel time a step", "",
                  "| kernel | calls a step | us a step | us a call |", "|---|---:|---:|---:|"]
        for name, (c, t) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:top]:
            short = name if len(name) <= 90 else name[:87] + "..."
            lines.append(f"| `{short}` | {c:.0f} | {t:.1f} | {t / c:.2f} |")
        lines.append("")
    return "\n".join(lines)


def check_steps(run, decoder):
    """The logits of the decoder's check steps from the position after the prefill (cloned)."""
    out = []
    decoder.rewind()
    for _ in range(decoder.checks):
        run()
        out.append(decoder.logits.float().clone())
        decoder.advance()
    decoder.rewind()
    return out


def compare(got, want):
    """Against WANT's steps: the worst relative logits error, the share of equal argmax tokens, and
    (equal, all) over the decisive tokens (see DECISIVE_SIGMAS)."""
    err = max(((g - w).norm() / w.norm()).item() for g, w in zip(got, want))
    same = decisive = decisive_same = 0
    for g, w in zip(got, want):
        g, w = g.reshape(-1, w.shape[-1]), w.reshape(-1, w.shape[-1])
        equal = g.argmax(-1) == w.argmax(-1)
        noise = (g - w).pow(2).mean(-1).sqrt()  # rms of each row's logit error
        top2 = w.topk(2, dim=-1).values
        sure = (top2[:, 0] - top2[:, 1]) > DECISIVE_SIGMAS * noise
        same += int(equal.sum())
        decisive += int(sure.sum())
        decisive_same += int((equal & sure).sum())
    return err, same / sum(w.numel() // w.shape[-1] for w in want), (decisive_same, decisive)


def fraction(pair):
    """(equal, all) as "equal/all"."""
    return "{}/{}".format(*pair)


def copy_rate_gbs():
    """The device-to-device copy rate (GB/s, read + write counted) of a 1 GiB buffer."""
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        b.copy_(a)
    end.record()
    end.synchronize()
    return 2 * a.numel() * 10 / (start.elapsed_time(end) * 1e-3) / 1e9


def floor_bytes(model, batch, context):
    c = model.config
    weights = sum(p.numel() * p.element_size() for p in model.parameters())  # tied: the head once
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    kv = 2 * c.num_hidden_layers * batch * c.num_key_value_heads * (context + 1) * head_dim * 2
    return weights + kv


def record_and_tune(args, out):
    import ktune.torch as kt
    keys = out / "keys.txt"
    keys.unlink(missing_ok=True)
    model = build(args.model, args.layers)
    for batch in args.batches:
        # sized as the timed phase sizes it (the attention key holds the cache length); the prefill is
        # not what is timed and is not recorded
        d = Decoder(model, batch, args.context, args.steps)
        handle = kt.optimize(model, db=args.db, record_misses=str(keys))
        d.step()
        d.advance()
        d.step()
        handle.undo()
    del model
    lines = [ln for ln in keys.read_text().splitlines() if ln.strip() and not ln.startswith("#")] \
        if keys.exists() else []
    print(f"hf_decode: {len(lines)} keys recorded in {keys}", file=sys.stderr)
    if args.tune and lines:
        cmd = [args.tune, "tune", "--shapes", str(keys), "--budget", str(args.budget), "--no-counters",
               "--db", args.db]
        print("hf_decode: " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return len(lines)


def time_eager(contenders, steps, rounds=5):
    """Milliseconds a step of each (run, decoder) contender, timed in ROUNDS alternating rounds of
    steps / ROUNDS steps each: the median round. Eager steps are bound by the host, so contenders
    timed apart (or after a compile left worker processes behind) would read the host's mood."""
    times = [[] for _ in contenders]
    for _ in range(rounds):
        for i, (run, decoder) in enumerate(contenders):
            times[i].append(time_ms(run, decoder, max(1, steps // rounds)))
    return [sorted(t)[len(t) // 2] for t in times]


def eager_batch(args, batch, stock, optimized, handle):
    """Batch's row with both eager contenders, checked and timed side by side (before any compile)."""
    row = dict(model=args.model, batch=batch, context=args.context)
    ds = Decoder(stock, batch, args.context, args.steps)
    dk = Decoder(optimized, batch, args.context, args.steps)
    want = check_steps(ds.step, ds)
    row["ktune_eager_error"], row["ktune_eager_argmax"], row["ktune_eager_decisive"] = \
        compare(check_steps(dk.step, dk), want)
    row["stock_eager_ms"], row["ktune_eager_ms"] = time_eager([(ds.step, ds), (dk.step, dk)], args.steps)
    served = {k: v for k, v in handle.decisions.items() if k[1] == batch}  # the decode keys (rows = batch)
    row["keys_served"], row["keys_met"] = sum(served.values()), len(served)
    return row, want


def compiled_batch(args, row, want, stock, optimized):
    """Adds both compiled contenders, each captured in a CUDA graph, to the batch's row."""
    batch = row["batch"]
    d = Decoder(stock, batch, args.context, args.steps)
    d.forward = torch.compile(stock, mode="max-autotune-no-cudagraphs", fullgraph=True)
    graph = d.capture()
    # the compiled model's own distance from eager: the noise floor ktune's check is read against
    row["stock_compiled_error"], row["stock_compiled_argmax"], row["stock_compiled_decisive"] = \
        compare(check_steps(graph.replay, d), want)
    row["stock_compiled_graph_ms"] = time_ms(graph.replay, d, args.steps)
    profiles = {"stock compiled, graph": kernel_profile(graph.replay, d)} if args.profile else {}
    del graph, d

    d = Decoder(optimized, batch, args.context, args.steps)
    d.forward = torch.compile(optimized, mode="max-autotune-no-cudagraphs", fullgraph=True)
    graph = d.capture()
    got = check_steps(graph.replay, d)
    row["ktune_compiled_error"], row["ktune_compiled_argmax"], row["ktune_compiled_decisive"] = compare(got, want)
    row["ktune_compiled_graph_ms"] = time_ms(graph.replay, d, args.steps)
    if args.profile:
        profiles["ktune compiled, graph"] = kernel_profile(graph.replay, d)
        text = f"## {args.model}, batch {batch}: the kernels of one replay\n\n" + profile_table(profiles)
        (pathlib.Path(args.out) / f"profile-b{batch}.md").write_text(text)
        row["profile"] = {k: {"kernels": sum(c for c, _ in v.values()), "us": sum(t for _, t in v.values())}
                          for k, v in profiles.items()}
    del graph, d
    row["floor_bytes"] = floor_bytes(stock, batch, args.context)
    # random weights give near-flat logits, so bf16 rounding flips some argmax tokens on any kernel
    # (torch.compile's own included): only a flip that rounding cannot explain fails
    return all(row[f"ktune_{v}_error"] <= LOGITS_TOLERANCE and
               row[f"ktune_{v}_decisive"][0] == row[f"ktune_{v}_decisive"][1] for v in ("eager", "compiled"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--db", help="ktune database (default: a new one in --out)")
    ap.add_argument("--tune", metavar="KTUNE_BIN", help="tune the recorded keys into --db with this ktune binary")
    ap.add_argument("--budget", type=int, default=8, help="measurements a key when tuning")
    ap.add_argument("--batches", default="1,8", help="comma-separated batch sizes")
    ap.add_argument("--context", type=int, default=1024, help="tokens in the cache before the timed steps")
    ap.add_argument("--steps", type=int, default=100, help="timed steps a contender")
    ap.add_argument("--layers", type=int, default=0, help="keep the first N layers (0: the model's)")
    ap.add_argument("--out", help="folder for keys.txt, the database and report.json (default: a new one)")
    ap.add_argument("--profile", action="store_true",
                    help="write OUT/profile-bBATCH.md: the kernels of one replay of both compiled graphs")
    ap.add_argument("--phase", choices=("all", "tune", "time"), default="all",
                    help="tune: record and tune only; time: serve and time only, on the tuned --db")
    args = ap.parse_args()
    args.batches = [int(x) for x in args.batches.split(",")]
    if not torch.cuda.is_available():
        print("hf_decode: no CUDA device (torch sees none)", file=sys.stderr)
        return 3
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="hf_decode."))
    args.out = str(out)
    out.mkdir(parents=True, exist_ok=True)
    args.db = args.db or str(out / "ktune.db")
    if args.phase == "time" and not pathlib.Path(args.db).exists():
        print(f"hf_decode: --phase time needs the tuned database; {args.db} does not exist", file=sys.stderr)
        return 2
    recorded = record_and_tune(args, out) if args.phase != "time" else None
    if args.phase == "tune":
        return 0
    import ktune.torch as kt
    stock = build(args.model, args.layers)
    optimized = copy.deepcopy(stock)
    handle = kt.optimize(optimized, db=args.db)
    # every eager measurement before the first compile: Inductor leaves worker processes behind
    eager = [eager_batch(args, batch, stock, optimized, handle) for batch in args.batches]
    report, ok = [], True
    for row, want in eager:
        ok &= compiled_batch(args, row, want, stock, optimized)
        report.append(row)
        # each batch's row as soon as it is measured: a run stopped by its time limit keeps them
        print("hf_decode: " + json.dumps(row), file=sys.stderr, flush=True)
        (out / "report.json").write_text(json.dumps(dict(rows=report), indent=1))
    handle.undo()
    rate = copy_rate_gbs()
    name = torch.cuda.get_device_name()
    print(f"{name}, torch {torch.__version__}, {args.model} ({stock.config.num_hidden_layers} layers), bf16, "
          f"context {args.context}, {'?' if recorded is None else recorded} keys recorded; ms a step")
    print("| batch | stock eager | stock compiled, graph | ktune eager | ktune compiled, graph | vs compiled "
          "| vs eager | keys served | HBM floor (4.8 TB/s / copy rate) | logits err (eager / compiled) | argmax "
          "| decisive argmax (eager / compiled) | stock compiled: err, argmax, decisive |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in report:
        floor_ms, copy_ms = r["floor_bytes"] / 4.8e12 * 1e3, r["floor_bytes"] / (rate * 1e9) * 1e3
        r["floor_ms"], r["copy_floor_ms"] = floor_ms, copy_ms
        print(f"| {r['batch']} | {r['stock_eager_ms']:.3f} | {r['stock_compiled_graph_ms']:.3f} | "
              f"{r['ktune_eager_ms']:.3f} | {r['ktune_compiled_graph_ms']:.3f} | "
              f"{r['stock_compiled_graph_ms'] / r['ktune_compiled_graph_ms']:.2f}x | "
              f"{r['stock_eager_ms'] / r['ktune_eager_ms']:.2f}x | {r['keys_served']}/{r['keys_met']} | "
              f"{floor_ms:.3f} / {copy_ms:.3f} | {r['ktune_eager_error']:.1e} / {r['ktune_compiled_error']:.1e} | "
              f"{100 * min(r['ktune_eager_argmax'], r['ktune_compiled_argmax']):.0f} % | "
              f"{fraction(r['ktune_eager_decisive'])} / {fraction(r['ktune_compiled_decisive'])} | "
              f"{r['stock_compiled_error']:.1e}, {100 * r['stock_compiled_argmax']:.0f} %, "
              f"{fraction(r['stock_compiled_decisive'])} |")
    (out / "report.json").write_text(json.dumps(dict(gpu=name, copy_rate_gbs=rate, rows=report), indent=1))
    print("checks:", "passed" if ok else f"FAILED (logits error > {LOGITS_TOLERANCE} or a decisive argmax token "
          "flipped)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
