"""ktune.torch.optimize on a GPU, with transformers models built from small configs (random bf16
weights; nothing downloads): a prefill and decode steps over a static KV cache through the
optimized model against the stock model (logits and both caches), eagerly, replayed from a
torch.cuda.graph capture and under torch.compile; with nothing tuned the optimized model is the
stock model bit for bit and every key it met is recorded. Skips with the reason without torch,
transformers or a CUDA device. Runs under pytest, or alone: `python3 test_torch_model_gpu.py`."""

import copy
import math
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

try:
    import torch
    import transformers
    _WHY = None if torch.cuda.is_available() else "torch sees no CUDA device"
except ImportError as e:
    torch = transformers = None
    _WHY = f"{e.name} is not installed"

try:
    import pytest
    pytestmark = pytest.mark.skipif(_WHY is not None, reason=_WHY or "")
except ImportError:
    pytest = None

PREFILL, STEPS, CACHE, BATCH, TOL = 6, 4, 64, 3, 3e-2


def _tiny(arch):
    """A 2-layer model of arch: hidden 256, 4 query / 2 key-value heads of 64, bf16 on cuda:0."""
    common = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=512, max_position_embeddings=512, head_dim=64)
    config, model = {
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM),
    }[arch]
    torch.manual_seed(0)
    m = model(config(**common)).to("cuda", torch.bfloat16).eval()
    with torch.no_grad():  # norms away from 1 so that a missing weight shows
        for name, p in m.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn_like(p.float()))
    return m


def _rel(got, want):
    got, want = got.double(), want.double()
    e = ((got - want).norm() / want.norm()).item()
    return math.inf if math.isnan(e) else e


def _decode(model, ids, steps=STEPS):
    """Prefill ids [B, PREFILL], then `steps` greedy decode steps: (logits of each step, cache)."""
    cache = transformers.StaticCache(config=model.config, max_cache_len=CACHE)
    batch = ids.shape[0]
    out = []
    with torch.no_grad():
        logits = model(input_ids=ids, past_key_values=cache,
                       position_ids=torch.arange(PREFILL, device="cuda")[None].expand(batch, -1)).logits
        out.append(logits[:, -1])
        token = logits[:, -1].argmax(-1, keepdim=True)
        for s in range(steps):
            pos = torch.full((batch, 1), PREFILL + s, device="cuda")
            logits = model(input_ids=token, past_key_values=cache, position_ids=pos).logits
            out.append(logits[:, -1])
            token = logits[:, -1].argmax(-1, keepdim=True)
    return out, cache


def _ids(seed=1, batch=BATCH):
    return torch.randint(0, 512, (batch, PREFILL), generator=torch.Generator(device="cuda").manual_seed(seed),
                         device="cuda")


def _db():
    return os.path.join(tempfile.mkdtemp(), "none.db")


def _check_against_stock(arch, batch=BATCH):
    import ktune.torch as kt
    stock = _tiny(arch)
    model = copy.deepcopy(stock)
    handle = kt.optimize(model, db=_db(), untuned="ktune")  # every key: ktune's default config
    in_layers = []  # positions converted inside an attention layer: the model's hook hands them down
    handle.step_positions = lambda ids, convert=handle.step_positions: in_layers.append(ids) or convert(ids)
    want, want_cache = _decode(stock, _ids(batch=batch))
    got, got_cache = _decode(model, _ids(batch=batch))
    assert in_layers == [], f"{arch}: {len(in_layers)} layer calls converted the step's positions themselves"
    for step, (g, w) in enumerate(zip(got, want)):
        assert _rel(g, w) < TOL, f"{arch} step {step}: logits error {_rel(g, w):.3g}"
    rows = PREFILL + STEPS
    for layer in range(model.config.num_hidden_layers):
        for which in ("keys", "values"):
            g = getattr(got_cache.layers[layer], which)[:, :, :rows]
            w = getattr(want_cache.layers[layer], which)[:, :, :rows]
            assert _rel(g, w) < TOL, f"{arch} layer {layer} {which}: error {_rel(g, w):.3g}"
        assert int(got_cache.layers[layer].cumulative_length) == rows
    served = {key[0] for key, use in handle.decisions.items() if use}
    assert served == {"gemm", "rmsnorm", "rmsnorm_residual", "rope_append", "decode_attention"}, handle.decisions
    assert handle.carry is None, "the last layer's norm result was not taken by the model's final norm"
    assert list(model.state_dict()) == list(stock.state_dict()), "optimize() changed the state_dict's keys"
    return stock, model, handle


def test_qwen2_decode_matches_the_stock_model():
    _check_against_stock("qwen2")


def test_llama_decode_matches_the_stock_model():
    _check_against_stock("llama")


def test_qwen3_decode_with_qk_norm_matches_the_stock_model():
    _check_against_stock("qwen3")


def _storage(p):
    return p.untyped_storage().data_ptr()


def _check_fused_projections(arch):
    """Batch 1: q/k/v as one GEMM and gate/up as one GEMM, over weights the layers share; undo()
    gives every parameter its own storage again with the same values."""
    stock, model, handle = _check_against_stock(arch, batch=1)
    cfg = model.config
    qkv = (cfg.num_attention_heads + 2 * cfg.num_key_value_heads) * 64
    served = {(k[1], k[2]) for k, use in handle.decisions.items() if use and k[0] == "gemm"}
    assert (1, qkv) in served and (1, 2 * cfg.intermediate_size) in served, handle.decisions
    for layer in model.model.layers:
        attn, mlp = layer.self_attn, layer.mlp
        assert _storage(attn.q_proj.weight) == _storage(attn.k_proj.weight) == _storage(attn.v_proj.weight)
        assert _storage(mlp.gate_proj.weight) == _storage(mlp.up_proj.weight)
        if attn.q_proj.bias is not None:
            assert _storage(attn.q_proj.bias) == _storage(attn.v_proj.bias)
    assert _changed(model, stock) == [], "fused parameters differ from the stock model's"
    handle.undo()
    shared = {}
    for name, p in model.named_parameters():
        assert _storage(p) not in shared, f"{name} shares storage with {shared.get(_storage(p))} after undo()"
        shared[_storage(p)] = name
    assert _changed(model, stock) == [], "parameters after undo() differ from the stock model's"


def _changed(model, stock):
    """(name, max |difference|) of every parameter of model that is not the stock model's."""
    want = dict(stock.named_parameters())
    return [(n, (p.float() - want[n].float()).abs().max().item() if p.shape == want[n].shape else "shape")
            for n, p in model.named_parameters() if not torch.equal(p, want[n])]


def test_qwen2_batch_one_fuses_the_biased_qkv_and_gate_up_projections():
    _check_fused_projections("qwen2")


def test_qwen3_batch_one_fuses_the_qkv_and_gate_up_projections():
    _check_fused_projections("qwen3")


def _state(cache):
    return [(layer.keys.clone(), layer.values.clone(), layer.cumulative_length.clone()) for layer in cache.layers]


def _restore(cache, state):
    for layer, (k, v, n) in zip(cache.layers, state):
        layer.keys.copy_(k)
        layer.values.copy_(v)
        layer.cumulative_length.copy_(n)


def test_a_decode_step_replays_from_a_cuda_graph_and_compiles():
    stock, model, handle = _check_against_stock("qwen2")
    _, cache = _decode(model, _ids(), steps=1)  # warm: every key decided eagerly
    token = torch.randint(0, 512, (BATCH, 1), device="cuda")
    pos = torch.full((BATCH, 1), PREFILL + 1, device="cuda")
    state = _state(cache)
    with torch.no_grad():
        want = model(input_ids=token, past_key_values=cache, position_ids=pos).logits.clone()
        _restore(cache, state)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # the warm-up of the capture stream
            model(input_ids=token, past_key_values=cache, position_ids=pos)
        torch.cuda.current_stream().wait_stream(stream)
        _restore(cache, state)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = model(input_ids=token, past_key_values=cache, position_ids=pos).logits
        _restore(cache, state)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(captured, want)
        assert int(cache.layers[0].cumulative_length) == PREFILL + 2
        _restore(cache, state)
        # one graph (hf_decode compiles so), the model's hook traced into it: no layer converts the
        # step's positions itself
        in_layers = []
        handle.step_positions = lambda ids, convert=type(handle).step_positions: (in_layers.append(1)
                                                                                  or convert(handle, ids))
        compiled = torch.compile(model, fullgraph=True)
        got = compiled(input_ids=token, past_key_values=cache, position_ids=pos).logits
        assert _rel(got, want) < TOL, f"compiled: logits error {_rel(got, want):.3g}"
        assert in_layers == [], f"{len(in_layers)} compiled layer calls converted the step's positions"
        assert int(cache.layers[0].cumulative_length) == PREFILL + 2


def test_nothing_tuned_runs_the_stock_code_and_records_every_key():
    import ktune.torch as kt
    stock = _tiny("qwen3")
    model = copy.deepcopy(stock)
    misses = os.path.join(tempfile.mkdtemp(), "misses.txt")
    handle = kt.optimize(model, db=_db(), record_misses=misses)
    want, _ = _decode(stock, _ids(seed=3))
    got, _ = _decode(model, _ids(seed=3))
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    assert handle.decisions and not any(handle.decisions.values())
    kernels = {line.split()[0] for line in open(misses) if line.strip() and not line.startswith("#")}
    assert kernels == {"gemm", "rmsnorm", "rope_append", "decode_attention"}, kernels
    handle.undo()
    assert type(model.lm_head) is torch.nn.Linear


if __name__ == "__main__":
    from standalone import run
    sys.exit(run(globals(), _WHY))
