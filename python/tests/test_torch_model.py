"""ktune.torch.optimize on the CPU: which modules of transformers models it swaps, that the
swapped model computes what the original does when ktune serves nothing (CPU tensors: every call
runs the original code), that parameters and the state_dict are the original's, and that undo()
restores every class. Skips with the reason without torch or transformers (the GPU side, where
ktune's kernels run, is test_torch_model_gpu.py)."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

torch = pytest.importorskip("torch", reason="torch is not installed")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")

import ktune.torch as kt  # noqa: E402


def _tiny(arch, seed=0):
    common = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=300, max_position_embeddings=256)
    config, model = {
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM),
        "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM),
    }[arch]
    extra = {"head_dim": 32} if arch in ("qwen3", "llama", "mistral") else {}
    torch.manual_seed(seed)
    return model(config(**common, **extra)).eval()


@pytest.mark.parametrize("arch", ["qwen2", "llama", "qwen3", "mistral"])
def test_swaps_the_known_modules_and_computes_the_same(arch):
    stock = _tiny(arch)
    model = _tiny(arch)
    ids = torch.randint(0, 300, (2, 7), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = stock(input_ids=ids).logits
    names = {n: type(m) for n, m in model.named_modules()}
    state = {k: v.data_ptr() for k, v in model.state_dict().items()}
    handle = kt.optimize(model)
    layers = model.config.num_hidden_layers
    norms_a_layer = 4 if arch == "qwen3" else 2  # input and post-attention norms (+ q/k norms)
    assert handle.swapped == {"linear": 7 * layers + 1, "rmsnorm": norms_a_layer * layers + 1, "attention": layers,
                              "mlp": layers, "layer": layers}
    assert all(type(m).__name__.startswith("Ktune") for m in model.modules()
               if isinstance(m, torch.nn.Linear)
               or type(m).__name__.endswith(("RMSNorm", "Attention", "MLP", "DecoderLayer")))
    assert {k: v.data_ptr() for k, v in model.state_dict().items()} == state  # the same tensors, the same keys
    with torch.no_grad():
        got = model(input_ids=ids).logits
    assert torch.equal(got, want)  # CPU tensors: every call ran the original code
    assert not any(handle.decisions.values())
    handle.undo()
    assert {n: type(m) for n, m in model.named_modules()} == names
    assert not any(hasattr(m, "_ktune") for m in model.modules())


def test_a_static_cache_decode_on_the_cpu_runs_the_original_code():
    stock, model = _tiny("qwen2"), _tiny("qwen2")
    kt.optimize(model)
    ids = torch.randint(0, 300, (2, 5), generator=torch.Generator().manual_seed(2))
    logits = []
    for m in (stock, model):
        cache = transformers.StaticCache(config=m.config, max_cache_len=32)
        with torch.no_grad():
            m(input_ids=ids, past_key_values=cache, position_ids=torch.arange(5)[None].expand(2, -1))
            out = m(input_ids=ids[:, -1:], past_key_values=cache, position_ids=torch.full((2, 1), 5))
        logits.append(out.logits)
        assert int(cache.layers[0].cumulative_length) == 6
    assert torch.equal(logits[0], logits[1])


def test_refuses_what_is_not_a_model():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        kt.optimize("model")
    with pytest.raises(ValueError, match="untuned"):
        kt.optimize(torch.nn.Linear(2, 2), untuned="maybe")


def test_a_plain_linear_stack_is_swapped_and_undone_by_the_context_manager():
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(3, 8)
    want = net(x)
    with kt.optimize(net) as handle:
        assert handle.swapped == {"linear": 2}
        assert type(net[0]).__name__ == "KtuneLinear" and isinstance(net[0], torch.nn.Linear)
        got = net(x)  # grad enabled, parameters requiring it: the original code, differentiable
        got.sum().backward()
        assert net[0].weight.grad is not None
    assert type(net[0]) is torch.nn.Linear
    assert torch.equal(got, want)
