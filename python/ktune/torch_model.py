"""ktune inside a PyTorch model: `optimize(model)` routes the model's layers to ktune's tuned kernels.

    import ktune.torch as kt
    handle = kt.optimize(model, record_misses="keys.txt")   # model: a torch.nn.Module, on a GPU
    model(...)                                             # tuned keys run ktune's kernels
    handle.undo()                                          # the model as it was

What it swaps, in place (the module keeps its parameters, its state_dict and its place in the
model; only its class changes, to a subclass whose forward chooses per call):
  - every torch.nn.Linear: ktune's gemm, with the bias epilogue where the layer has a bias;
  - the RMSNorm modules of transformers' Llama, Mistral, Qwen2 and Qwen3 (found by class): rmsnorm;
  - their decoder layers: the same steps, with each residual add inside ktune's RMSNorm with its
    residual (rmsnorm_residual): the add after attention with the post-attention norm, the add
    after the MLP with the next layer's input norm (the model's final norm after the last layer);
  - their MLP modules: gate and up run as one GEMM over the two weights concatenated, then
    act(gate) * up and the down projection;
  - their attention modules: a decode step (one new token a sequence) over transformers' static
    KV cache (StaticCache) runs the q/k/v projections (one GEMM over the three weights when the
    step has one token, so that q, k and v are dense slices of its output), RoPE with the cache
    append (with the q/k RMSNorm for Qwen3) and decode attention from ktune; a prefill, a dynamic cache, a sliding
    window shorter than the cache, or a batch with padding (an attention_mask with a zero, seen
    by a check once a forward of the model) runs the original code. The model's forward pre-hook
    also converts a decode step's positions to int32 once and hands them down to every layer
    (call the model, not its `forward`, for that: a direct `forward` call converts them per layer).
The fused projections concatenate the weights (and biases) once, at the first call on a GPU, and
point the Linear layers' parameters at their slices: the same Parameter objects and values, one
storage (undo() gives each its own again; a library that refuses shared storage, such as
safetensors' save, wants undo() first; moving or casting the model drops the fused weights, which
are built again at the next call).
Each swapped module asks, once per input shape and dtype, whether ktune holds a tuned config for
that key (a Runtime with on_miss="error": nothing is compiled for a key that is not tuned). A
tuned key runs ktune's kernel; any other key, an input on another device or dtype, or a call
whose result autograd must differentiate (grad enabled and an input or parameter requiring it)
runs the module's original forward, at the cost of a dictionary look-up. Keys that are not tuned
are appended to record_misses (one `KERNEL SHAPE DTYPE [LAYOUT]` line each) for
`ktune tune --shapes FILE`; run the model once more on the tuned database and they are served.

Eagerly the modules take the cheapest door: torch.ops.ktune.* where its C++ kernel is built
(ktune.torch.NATIVE: gemm, rmsnorm, rope_append and decode_attention), ktune.Runtime directly otherwise; under torch.compile
they call torch.ops.ktune.* (opaque to Inductor, which fuses the glue around them). The decisions are
made eagerly: a key first met while compiling or while a CUDA graph is captured runs the original
code (run the model eagerly once first, as warm-up before capture does anyway).
"""

import inspect
import threading

import torch
import torch.nn.functional as F

from . import _native
from . import torch as _ops
from .errors import BadInputError, NotFoundError
from .runtime import Runtime

# Eager calls of these ops go through torch.ops.ktune: its C++ kernel allocates and launches for
# less than the Python Runtime door plus a torch allocation (docs/perf/cache-lookup.md).
_EAGER_OP = {name: _ops.NATIVE and name in _native.NATIVE_OPS
             for name in ("gemm", "rmsnorm", "rmsnorm_residual", "rope_append", "decode_attention")}

_RMSNORM_CLASSES = ("LlamaRMSNorm", "MistralRMSNorm", "Qwen2RMSNorm", "Qwen3RMSNorm")
_ATTENTION_CLASSES = ("LlamaAttention", "MistralAttention", "Qwen2Attention", "Qwen3Attention")
_MLP_CLASSES = ("LlamaMLP", "MistralMLP", "Qwen2MLP", "Qwen3MLP")
_LAYER_CLASSES = ("LlamaDecoderLayer", "MistralDecoderLayer", "Qwen2DecoderLayer", "Qwen3DecoderLayer")
_QKV = ("q_proj", "k_proj", "v_proj")
_GATE_UP = ("gate_proj", "up_proj")
_FUSED = {"attention": _QKV, "mlp": _GATE_UP}  # the Linear layers a module kind fuses
_DTYPES = (torch.bfloat16, torch.float16)


# The keyword argument the model's pre-hook hands down to the attention modules: (positions, context
# lengths), int32 [B] each, of a decode step.
STEP_POSITIONS = "ktune_step_positions"


def _deciding() -> bool:
    """Whether a new key may be decided now: not while compiling, not while capturing a graph."""
    if torch.compiler.is_compiling():
        return False
    return not (torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing())


def _grad_needed(*tensors) -> bool:
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


class Optimized:
    """What optimize() did to a model: `swapped` (module kind -> count), `decisions` (key ->
    True when ktune serves it), `runtime(device)`; `undo()` restores every module."""

    def __init__(self, model, db, record_misses, runtime, attention, untuned):
        self._db, self._record_misses, self._untuned = db, record_misses, untuned
        self._runtimes = {} if runtime is None else {runtime.device: runtime}
        self._lock = threading.Lock()
        self.attention = attention
        self.decisions = {}
        self.swapped = {}
        self._modules = []  # (module, original class)
        self._hook = None
        self._tables = {}  # (rotary module id, rows, device) -> cos/sin table f32 [rows, rot]
        self._step = None  # (position_ids, its version, positions i32 [B], context lengths i32 [B])
        self.padded = False  # the last eager forward's attention_mask had a zero
        # (sum, rmsnorm(sum) * w, w): a decoder layer's output and its next norm's, computed together
        # by that layer; the norm whose weight is w, called on sum, returns the second
        self.carry = None
        self.rotary = None  # the model's rotary embedding module (transformers' models have one)

    # ---- set-up

    def _swap(self, module, cls, kind):
        module.__class__ = _subclass(cls)
        module._ktune = self
        module._ktune_keys = {}
        if kind in _FUSED:
            module._ktune_fused = None  # (weight, bias, sizes) once fused; False: they cannot be
        if kind == "layer":
            module._ktune_next = None  # the norm that follows it (_chain_layers)
        self._modules.append((module, cls))
        self.swapped[kind] = self.swapped.get(kind, 0) + 1

    def undo(self):
        """Restores every swapped module's class and removes what optimize() added."""
        for module, cls in reversed(self._modules):
            if module.__dict__.get("_ktune_fused"):
                _unfuse(module, _FUSED[_kind_of(cls)])
            module.__class__ = cls
            for name in ("_ktune", "_ktune_keys", "_ktune_fused", "_ktune_next"):
                module.__dict__.pop(name, None)
        self.carry = None
        self._modules.clear()
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        for rt in self._runtimes.values():
            _ops.forget(rt)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.undo()

    # ---- serving

    def runtime(self, index: int) -> Runtime:
        rt = self._runtimes.get(index)
        if rt is None:
            with self._lock:
                rt = self._runtimes.get(index)
                if rt is None:
                    on_miss = "error" if self._untuned == "original" else "nearest"
                    rt = Runtime(db=self._db, device=index, on_miss=on_miss, record_misses=self._record_misses)
                    self._runtimes[index] = rt
        if _ops._runtimes.get(index) is not rt:  # torch.ops.ktune (the compiled path) serves from it
            _ops.use_runtime(rt)
        return rt

    def decide(self, key, prepare) -> bool:
        """Whether ktune serves `key`: prepare() succeeds and reports a tuned plan (any plan with
        untuned="ktune")."""
        use = self.decisions.get(key)
        if use is None:
            try:
                use = prepare().source == "tuned" or self._untuned == "ktune"
            except (NotFoundError, BadInputError):  # not tuned (and recorded), or a shape ktune refuses
                use = False
            self.decisions[key] = use
        return use

    def step_positions(self, position_ids):
        """positions (int32 [B]) and context lengths (int32 [B], position + 1) of a decode step:
        computed once a step (the same position_ids reach every layer) when eager."""
        if torch.compiler.is_compiling():
            pos = position_ids.reshape(-1).to(torch.int32)
            return pos, pos + 1
        step = self._step
        if step is None or step[0] is not position_ids or step[1] != position_ids._version:
            pos = position_ids.reshape(-1).to(torch.int32)
            step = self._step = (position_ids, position_ids._version, pos, pos + 1)
        return step[2], step[3]

    def rope_table(self, rotary, rows, device):
        """cos then sin (f32 [rows, rot]) of positions 0..rows-1 from the model's rotary module
        (its scaling and attention factor included), built once."""
        key = (id(rotary), rows, device)
        table = self._tables.get(key)
        if table is None:
            positions = torch.arange(rows, device=device)[None]
            cos, sin = rotary(torch.empty(1, device=device, dtype=torch.float32), positions)
            half = cos.shape[-1] // 2
            table = torch.cat([cos[0, :, :half], sin[0, :, :half]], dim=1).float().contiguous()
            self._tables[key] = table
        return table


_SUBCLASSES = {}  # a swapped module's class -> its Ktune subclass


def _subclass(cls):
    sub = _SUBCLASSES.get(cls)
    if sub is None:
        kind = _kind_of(cls)
        members = {"forward": _FORWARDS[kind], "_ktune_base": cls}
        if kind in _FUSED:
            members["_apply"] = _apply_dropping_fused
        sub = _SUBCLASSES[cls] = type(f"Ktune{cls.__name__}", (cls,), members)
    return sub


def _apply_dropping_fused(self, fn, *args, **kwargs):
    """Module._apply (to(), cuda(), half() ...): the layers' parameters may be new tensors after
    it, so the fused weights are dropped and fused again at the next call."""
    out = self._ktune_base._apply(self, fn, *args, **kwargs)
    self._ktune_fused = None
    self._ktune_keys.clear()
    return out


def _kind_of(cls):
    if cls is torch.nn.Linear:  # not its subclasses (quantized layers keep other weights)
        return "linear"
    for c in cls.__mro__:
        if c.__name__ in _RMSNORM_CLASSES:
            return "rmsnorm"
        if c.__name__ in _ATTENTION_CLASSES:
            return "attention"
        if c.__name__ in _MLP_CLASSES:
            return "mlp"
        if c.__name__ in _LAYER_CLASSES:
            return "layer"
    return None


def _plain_linear(m) -> bool:
    return type(m) is torch.nn.Linear or getattr(type(m), "_ktune_base", None) is torch.nn.Linear


# ---- projections fused into one GEMM


def _fuse(module, names):
    """Concatenates the weights (and biases) of module's Linear layers `names` (on a GPU, one dtype,
    one input size, all with a bias or none) and points their parameters at the slices; returns
    (weight, bias or None, output sizes), or False when they cannot be fused."""
    layers = [getattr(module, n, None) for n in names]
    if not all(_plain_linear(m) for m in layers):
        return False
    w0 = layers[0].weight
    if (not w0.is_cuda or w0.dtype not in _DTYPES
            or any(m.weight.dtype != w0.dtype or m.weight.device != w0.device or m.in_features != layers[0].in_features
                   for m in layers)):
        return False
    biased = [m.bias is not None for m in layers]
    if any(biased) and (not all(biased) or any(m.bias.dtype != w0.dtype for m in layers)):
        return False
    sizes = [m.out_features for m in layers]
    with torch.no_grad():
        weight = torch.cat([m.weight for m in layers])
        bias = torch.cat([m.bias for m in layers]) if all(biased) else None
    for m, part in zip(layers, weight.split(sizes)):
        m.weight.data = part
    if bias is not None:
        for m, part in zip(layers, bias.split(sizes)):
            m.bias.data = part
    return weight, bias, sizes


def _unfuse(module, names):
    """Gives each fused layer's parameters a storage of their own again (the same values)."""
    with torch.no_grad():
        for m in (getattr(module, n) for n in names):
            m.weight.data = m.weight.data.clone()
            if m.bias is not None:
                m.bias.data = m.bias.data.clone()


def _gemm(module, a, weight, bias):
    """a @ weight.T (+ bias) through ktune's cheapest door (see _linear_forward)."""
    epilogue = "none" if bias is None else "bias"
    if torch.compiler.is_compiling():
        return _ops.gemm(a, weight, bias, "nt", epilogue)
    rt = module._ktune.runtime(a.get_device())  # bound to torch.ops.ktune (another model's may be)
    if _EAGER_OP["gemm"]:
        return _ops.gemm(a, weight, bias, "nt", epilogue)
    c = a.new_empty((a.shape[0], weight.shape[0]))
    rt.gemm(a, weight, c, bias=bias, epilogue=epilogue)
    return c


def _fused_served(self, x, names) -> bool:
    """Whether the fused projection of `names` serves input x (its key tuned); decided once per
    input shape and dtype, eagerly."""
    key = (names, x.shape, x.dtype)
    use = self._ktune_keys.get(key)
    if use is None:
        if not _deciding():
            return False
        use = self._ktune_keys[key] = _decide_fused(self, x, names)
    return use and not _grad_needed(x, *(getattr(self, n).weight for n in names))


def _decide_fused(self, x, names):
    if not (x.is_cuda and x.dtype in _DTYPES and x.dim() >= 2 and x.numel() > 0):
        return False
    if self._ktune_fused is None:
        self._ktune_fused = _fuse(self, names)
    if not self._ktune_fused:
        return False
    weight, bias, _ = self._ktune_fused
    if weight.dtype != x.dtype or weight.device != x.device or x.shape[-1] != weight.shape[1]:
        return False
    a = x.reshape(-1, weight.shape[1])
    epilogue = "none" if bias is None else "bias"
    rt = self._ktune.runtime(x.get_device())
    key = ("gemm", a.shape[0], weight.shape[0], weight.shape[1], x.dtype, epilogue, x.get_device())
    return self._ktune.decide(key, lambda: rt.prepare_gemm(a, weight, None, bias=bias, epilogue=epilogue))


# ---- the forwards of the swapped modules


def _linear_forward(self, x):
    use = self._ktune_keys.get((x.shape, x.dtype))
    if use is False:  # the common case of an untuned key first: its cost is this look-up alone
        return F.linear(x, self.weight, self.bias)
    if use is None:
        use = _decide_linear(self, x) if _deciding() else False
    if not use or _grad_needed(x, self.weight, self.bias):
        return F.linear(x, self.weight, self.bias)
    c = _gemm(self, x.reshape(-1, self.in_features), self.weight, self.bias)
    return c.view(*x.shape[:-1], self.out_features)


def _decide_linear(self, x):
    w, b = self.weight, self.bias
    use = False
    if (x.is_cuda and x.dtype in _DTYPES and w.dtype == x.dtype and w.device == x.device and x.dim() >= 2
            and (b is None or b.dtype == x.dtype) and x.shape[-1] == self.in_features and x.numel() > 0):
        a = x.reshape(-1, self.in_features)
        epilogue = "none" if b is None else "bias"
        rt = self._ktune.runtime(x.get_device())
        key = ("gemm", a.shape[0], self.out_features, self.in_features, x.dtype, epilogue, x.get_device())
        use = self._ktune.decide(key, lambda: rt.prepare_gemm(a, w, None, bias=b, epilogue=epilogue))
    self._ktune_keys[(x.shape, x.dtype)] = use
    return use


def _rmsnorm_forward(self, x):
    carry = self._ktune.carry
    if carry is not None and carry[0] is x and carry[2] is self.weight:  # the previous layer normed x
        self._ktune.carry = None
        return carry[1]
    use = self._ktune_keys.get((x.shape, x.dtype))
    if use is False:
        return self._ktune_base.forward(self, x)
    if use is None:
        use = _decide_rmsnorm(self, x) if _deciding() else False
    if not use or _grad_needed(x, self.weight):
        return self._ktune_base.forward(self, x)
    return _norm(self, x.reshape(-1, x.shape[-1])).view(x.shape)


def _norm(norm, x2, r2=None):
    """rmsnorm(x2) * norm.weight, or with r2 (rmsnorm(x2 + r2) * norm.weight, x2 + r2), through
    ktune's cheapest door (see _gemm)."""
    op, eps = ("rmsnorm" if r2 is None else "rmsnorm_residual"), norm.variance_epsilon
    if torch.compiler.is_compiling():
        return _ops.rmsnorm(x2, norm.weight, eps) if r2 is None else _ops.rmsnorm_residual(x2, r2, norm.weight, eps)
    rt = norm._ktune.runtime(x2.get_device())  # bound to torch.ops.ktune (another model's may be)
    if _EAGER_OP[op]:
        return _ops.rmsnorm(x2, norm.weight, eps) if r2 is None else _ops.rmsnorm_residual(x2, r2, norm.weight, eps)
    return rt.rmsnorm(x2, norm.weight, torch.empty_like(x2), residual=r2,
                      residual_out=None if r2 is None else torch.empty_like(x2), eps=eps)


def _norm_takes(norm, x) -> bool:
    """Whether ktune's rmsnorm takes x with norm's weight (device, dtype, a dense [..., hidden])."""
    w = norm.weight
    return (x.is_cuda and x.dtype in _DTYPES and w.dtype == x.dtype and w.device == x.device and x.dim() >= 2
            and x.is_contiguous() and w.shape == (x.shape[-1],) and x.numel() > 0)


def _decide_rmsnorm(self, x):
    use = False
    if _norm_takes(self, x):
        x2 = x.reshape(-1, x.shape[-1])
        rt = self._ktune.runtime(x.get_device())
        key = ("rmsnorm", x2.shape[0], x2.shape[1], x.dtype, x.get_device())
        use = self._ktune.decide(key, lambda: rt.prepare_rmsnorm(x2, self.weight, eps=self.variance_epsilon))
    self._ktune_keys[(x.shape, x.dtype)] = use
    return use


def _residual_norm(norm, x, residual):
    """(rmsnorm(x + residual) * norm.weight, x + residual) from one ktune kernel when norm is a
    swapped RMSNorm and that key is tuned; None otherwise (the caller adds and norms itself)."""
    if getattr(norm, "_ktune", None) is None:
        return None
    key = ("residual", x.shape, x.dtype)
    use = norm._ktune_keys.get(key)
    if use is None:
        if not _deciding():
            return None
        use = norm._ktune_keys[key] = _decide_residual(norm, x, residual)
    if not use or _grad_needed(x, residual, norm.weight):
        return None
    y, s = _norm(norm, x.reshape(-1, x.shape[-1]), residual.reshape(-1, x.shape[-1]))
    return y.view(x.shape), s.view(x.shape)


def _decide_residual(norm, x, residual):
    if not (_norm_takes(norm, x) and residual.dtype == x.dtype and residual.shape == x.shape
            and residual.is_contiguous()):
        return False
    x2 = x.reshape(-1, x.shape[-1])
    rt = norm._ktune.runtime(x.get_device())
    key = ("rmsnorm_residual", x2.shape[0], x2.shape[1], x.dtype, x.get_device())
    return norm._ktune.decide(key, lambda: rt.prepare_rmsnorm(x2, norm.weight, residual=x2,
                                                              eps=norm.variance_epsilon))


def _layer_forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                   use_cache=False, position_embeddings=None, **kwargs):
    """transformers' decoder layer (input norm, attention, residual add, post-attention norm, MLP,
    residual add) with each residual add inside ktune's rmsnorm with its residual: the first with
    the post-attention norm, the last with the next layer's input norm (or the model's final norm),
    which then finds its result in opt.carry."""
    residual = hidden_states
    h = self.input_layernorm(hidden_states)
    h, _ = self.self_attn(hidden_states=h, attention_mask=attention_mask, position_ids=position_ids,
                          past_key_values=past_key_values, use_cache=use_cache,
                          position_embeddings=position_embeddings, **kwargs)
    fused = _residual_norm(self.post_attention_layernorm, h, residual)
    if fused is None:
        hidden = residual + h
        h = self.post_attention_layernorm(hidden)
    else:
        h, hidden = fused
    h = self.mlp(h)
    following = self._ktune_next
    fused = None if following is None else _residual_norm(following, h, hidden)
    if fused is None:
        return hidden + h
    self._ktune.carry = (fused[1], fused[0], following.weight)
    return fused[1]


def _mlp_forward(self, x):
    if not _fused_served(self, x, _GATE_UP):
        if self._ktune_fused:  # fused but not tuned: the original math, the layers' own keys unrecorded
            gate, up = self.gate_proj, self.up_proj
            return self.down_proj(self.act_fn(F.linear(x, gate.weight, gate.bias)) * F.linear(x, up.weight, up.bias))
        return self._ktune_base.forward(self, x)
    weight, bias, sizes = self._ktune_fused
    gate, up = _gemm(self, x.reshape(-1, weight.shape[1]), weight, bias).split(sizes, dim=1)
    return self.down_proj((self.act_fn(gate) * up).view(*x.shape[:-1], sizes[1]))


def _project_qkv(self, x, batch, hq, hk, d):
    """q [batch, hq, d], k and v [batch, hk, d] of a decode step's hidden states x [batch, 1, h]:
    with one token, one GEMM over the fused weights (its slices are dense); else each layer."""
    if batch == 1 and _fused_served(self, x, _QKV):
        weight, bias, sizes = self._ktune_fused
        q, k, v = _gemm(self, x.reshape(1, -1), weight, bias).split(sizes, dim=1)
    elif batch == 1 and self._ktune_fused:  # fused but not tuned: the original math, unrecorded
        q, k, v = (F.linear(x, m.weight, m.bias) for m in (self.q_proj, self.k_proj, self.v_proj))
    else:
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
    return q.view(batch, hq, d), k.view(batch, hk, d), v.view(batch, hk, d)


def _attention_forward(self, hidden_states, position_embeddings=None, attention_mask=None, past_key_values=None,
                       **kwargs):
    step = kwargs.pop(STEP_POSITIONS, None)
    layer = _static_layer(self, hidden_states, past_key_values, kwargs)
    if layer is None:
        return self._ktune_base.forward(self, hidden_states, position_embeddings, attention_mask, past_key_values,
                                        **kwargs)
    opt = self._ktune
    batch, rows = hidden_states.shape[0], layer.keys.shape[2]
    hq, hk, d = self.config.num_attention_heads, self.config.num_key_value_heads, self.head_dim
    table = opt.rope_table(opt.rotary, rows, hidden_states.device)
    positions, lens = step if step is not None else opt.step_positions(kwargs["position_ids"])
    q, k, v = _project_qkv(self, hidden_states, batch, hq, hk, d)
    qw = self.q_norm.weight if hasattr(self, "q_norm") else None
    kw = self.k_norm.weight if hasattr(self, "k_norm") else None
    eps = self.q_norm.variance_epsilon if qw is not None else 1e-6
    if torch.compiler.is_compiling():
        q = _ops.rope_append(q, k, v, table, positions, layer.keys, layer.values, qw, kw, None, 1, eps, "neox")
        o = _ops.decode_attention(q, layer.keys, layer.values, lens, self.scaling, None)
    elif _EAGER_OP["rope_append"] and _EAGER_OP["decode_attention"]:
        opt.runtime(hidden_states.get_device())  # bound to torch.ops.ktune (another model's may be)
        q = _ops.rope_append(q, k, v, table, positions, layer.keys, layer.values, qw, kw, None, 1, eps, "neox")
        o = _ops.decode_attention(q, layer.keys, layer.values, lens, self.scaling, None)
    else:
        rt = opt.runtime(hidden_states.get_device())
        q = rt.rope_append(q, k, v, table, positions, layer.keys, layer.values, q_out=torch.empty_like(q),
                           q_weight=qw, k_weight=kw, eps=eps)
        o = rt.decode_attention(q, layer.keys, layer.values, torch.empty_like(q), context_lens=lens,
                                scale=self.scaling)
    layer.cumulative_length.add_(1)  # what the cache's own update() counts
    return self.o_proj(o.view(batch, 1, hq * d)), None


def _static_layer(self, x, cache, kwargs):
    """The static cache layer a decode step of this attention module writes, when ktune serves the
    step (its keys tuned); None: the original code runs."""
    opt = self._ktune
    if (not opt.attention or opt.padded or x.dim() != 3 or x.shape[1] != 1 or cache is None
            or kwargs.get("position_ids") is None or _grad_needed(x, self.q_proj.weight)):
        return None
    layer = getattr(cache, "layers", None)
    layer = layer[self.layer_idx] if layer is not None and self.layer_idx < len(layer) else None
    if type(layer).__name__ != "StaticLayer" or not getattr(layer, "is_initialized", False):
        return None
    rows = layer.keys.shape[2]
    key = (x.shape[0], rows, x.dtype)
    use = self._ktune_keys.get(key)
    if use is None:
        use = _decide_attention(self, x, layer) if _deciding() else False
        self._ktune_keys[key] = use
    return layer if use else None


def _decide_attention(self, x, layer):
    opt, cfg = self._ktune, self.config
    window = getattr(self, "sliding_window", getattr(cfg, "sliding_window", None))
    keys = layer.keys
    if (not x.is_cuda or x.dtype not in _DTYPES or keys.dtype != x.dtype or not keys.is_contiguous()
            or not layer.values.is_contiguous() or opt.rotary is None
            or (window is not None and window < keys.shape[2])):
        return False
    batch, hq, hk, d, rows = x.shape[0], cfg.num_attention_heads, cfg.num_key_value_heads, self.head_dim, keys.shape[2]
    device = x.get_device()
    rt = opt.runtime(device)
    table = opt.rope_table(opt.rotary, rows, x.device)
    if table.shape[1] != d:
        return False  # a partial rotary dimension: not these classes' layout
    q = torch.empty(batch, hq, d, dtype=x.dtype, device=x.device)
    kv = torch.empty(batch, hk, d, dtype=x.dtype, device=x.device)
    pos = torch.zeros(batch, dtype=torch.int32, device=x.device)
    qk_norm = hasattr(self, "q_norm")
    qw = self.q_norm.weight if qk_norm else None
    kw = self.k_norm.weight if qk_norm else None
    rope = opt.decide(("rope_append", batch, hq, hk, d, rows, x.dtype, qk_norm, device),
                      lambda: rt.prepare_rope_append(q, kv, kv, table, pos, keys, layer.values, q_out=q,
                                                     q_weight=qw, k_weight=kw))
    attention = opt.decide(("decode_attention", batch, hq, hk, d, rows, x.dtype, device),
                           lambda: rt.prepare_decode_attention(q, keys, layer.values, q, context_lens=pos + 1,
                                                               scale=self.scaling))
    if batch == 1:
        _fused_served(self, x, _QKV)  # decided (and recorded when not tuned) with the step's other keys
    return rope and attention


_FORWARDS = {"linear": _linear_forward, "rmsnorm": _rmsnorm_forward, "attention": _attention_forward,
             "mlp": _mlp_forward, "layer": _layer_forward}


def _step_hook(opt, passes_kwargs):
    """The model's forward pre-hook: whether the attention mask pads (read eagerly only), and, for a
    decode step of a model whose forward hands its keyword arguments down to the attention modules
    (transformers' do), the step's positions and context lengths as int32, converted once a step
    instead of once a layer (under torch.compile as well: two kernels a step, not two a layer)."""
    def hook(module, args, kwargs):
        opt.carry = None
        if passes_kwargs:
            ids = kwargs.get("position_ids")
            if ids is None and kwargs.get("cache_position") is not None:
                ids = kwargs["cache_position"][None]
            if isinstance(ids, torch.Tensor) and ids.dim() == 2 and ids.shape[1] == 1:
                pos = ids.reshape(-1).to(torch.int32)
                kwargs = {**kwargs, STEP_POSITIONS: (pos, pos + 1)}
        if _deciding():
            mask = kwargs.get("attention_mask")
            if mask is None:
                opt.padded = False
            elif isinstance(mask, torch.Tensor) and mask.dim() == 2 and not mask.is_floating_point():
                opt.padded = not bool(mask.all())  # one synchronisation a forward, eagerly only
            else:
                opt.padded = True  # a mask it cannot read (4-D, additive): the original attention
        return args, kwargs
    return hook


def _passes_kwargs(model) -> bool:
    """Whether model's forward takes **kwargs (and so, in transformers' models, hands them down to
    every decoder layer's attention)."""
    try:
        params = inspect.signature(type(model).forward).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _chain_layers(model):
    """Each swapped decoder layer's following norm: the next layer's input norm, the last layer's
    the model's final norm (transformers' `layers` list and `norm` of the model body), when swapped."""
    for body in model.modules():
        layers, final = getattr(body, "layers", None), getattr(body, "norm", None)
        if not isinstance(layers, torch.nn.ModuleList):
            continue
        for i, layer in enumerate(layers):
            if "_ktune_keys" not in layer.__dict__ or _kind_of(type(layer)) != "layer":
                continue
            following = layers[i + 1].input_layernorm if i + 1 < len(layers) else final
            swapped = following is not None and "_ktune_keys" in following.__dict__
            # object.__setattr__: a Module assigned the usual way would be registered as a submodule
            # (a second path to the norm's weight in parameters() and state_dict())
            object.__setattr__(layer, "_ktune_next",
                               following if swapped and _kind_of(type(following)) == "rmsnorm" else None)


def optimize(model, db=None, record_misses=None, runtime=None, untuned="original", linear=True, rmsnorm=True,
             attention=True, mlp=True, layers=True):
    """Swaps model's modules for ones that run ktune's tuned kernels (see the module's doc);
    returns an Optimized handle (undo() restores the model). db: the database (None: $KTUNE_DB,
    else ~/.cache/ktune/ktune.db); record_misses: a file for every key met that is not tuned;
    runtime: serve from this ktune.Runtime instead of one opened per device on db; untuned:
    "original" (a key without a tuned config runs the module's own code) or "ktune" (it runs
    ktune's nearest tuned or default config: for trying ktune before a sweep, and for tests);
    linear, rmsnorm, attention, mlp, layers: which kinds of module to swap (a decoder layer's
    residual adds move into ktune's RMSNorm, so layers needs rmsnorm)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"optimize: model must be a torch.nn.Module, not {type(model).__name__}")
    if runtime is not None and db is not None:
        raise ValueError("optimize: give db or runtime, not both")
    if untuned not in ("original", "ktune"):
        raise ValueError(f"optimize: untuned={untuned!r} is not 'original' or 'ktune'")
    opt = Optimized(model, db, record_misses, runtime, attention, untuned)
    rotary = [m for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding")]
    opt.rotary = rotary[0] if len(rotary) == 1 else None  # the one table of the model's positions
    wanted = {"linear": linear, "rmsnorm": rmsnorm, "attention": attention, "mlp": mlp, "layer": layers and rmsnorm}
    for module in list(model.modules()):
        cls = type(module)
        kind = _kind_of(cls)
        if kind is None or not wanted[kind] or hasattr(module, "_ktune") or cls.__name__.startswith("Ktune"):
            continue
        if kind == "rmsnorm" and not (hasattr(module, "weight") and hasattr(module, "variance_epsilon")):
            continue
        opt._swap(module, cls, kind)
    _chain_layers(model)
    if opt.swapped.get("attention") or opt.swapped.get("layer"):
        opt._hook = model.register_forward_pre_hook(_step_hook(opt, _passes_kwargs(model)), with_kwargs=True)
    return opt
