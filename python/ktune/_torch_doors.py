"""How ktune.torch.optimize's swapped modules call ktune: the cheapest door of each op (gemm,
rmsnorm with or without its residual), whether a key may be decided now, and the projections fused
into one GEMM (weights concatenated once, the Linear layers' parameters pointed at the slices)."""

import torch

from . import _native
from . import torch as _ops

# Eager calls of these ops go through torch.ops.ktune: its C++ kernel allocates and launches for
# less than the Python Runtime door plus a torch allocation (docs/perf/cache-lookup.md).
_EAGER_OP = {name: _ops.NATIVE and name in _native.NATIVE_OPS
             for name in ("gemm", "rmsnorm", "rmsnorm_residual", "rope_append", "decode_attention")}
_DTYPES = (torch.bfloat16, torch.float16)


def _deciding() -> bool:
    """Whether a new key may be decided now: not while compiling, not while capturing a graph."""
    if torch.compiler.is_compiling():
        return False
    return not (torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing())


def _grad_needed(*tensors) -> bool:
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


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


# ---- projections fused into one GEMM


def _plain_linear(m) -> bool:
    return type(m) is torch.nn.Linear or getattr(type(m), "_ktune_base", None) is torch.nn.Linear


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
