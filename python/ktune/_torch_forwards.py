"""The forwards of the modules ktune.torch.optimize swaps (Linear, RMSNorm, MLP, attention, decoder
layer): each decides once per input shape and dtype whether ktune serves it, and runs ktune's
kernels or the module's original code (ktune/torch_model.py tells which and when)."""

import torch
import torch.nn.functional as F

from . import torch as _ops
from ._torch_doors import _DTYPES, _EAGER_OP, _deciding, _fused_served, _gemm, _grad_needed, _norm, _norm_takes

_QKV = ("q_proj", "k_proj", "v_proj")
_GATE_UP = ("gate_proj", "up_proj")
_FUSED = {"attention": _QKV, "mlp": _GATE_UP}  # the Linear layers a module kind fuses


# The keyword argument the model's pre-hook hands down to the attention modules: (positions, context
# lengths), int32 [B] each, of a decode step.
STEP_POSITIONS = "ktune_step_positions"


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
