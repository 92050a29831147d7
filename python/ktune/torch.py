"""ktune's operators as PyTorch operators (torch.library): `torch.ops.ktune.<op>`.

    import torch, ktune.torch
    y = torch.ops.ktune.rmsnorm(x, w, 1e-6)        # or ktune.torch.rmsnorm(x, w)

Each op allocates its outputs (rope_append also writes its k_cache and v_cache in place, which
its schema declares as mutated), launches the tuned kernel on the current CUDA stream of its
inputs' device and has a fake (meta) implementation, so it runs eagerly, inside torch.cuda.graph
capture, and under torch.compile(fullgraph=True). The ops are defined with torch.library.Library
and a CUDA kernel each, the registration with the least dispatch cost (torch.library.custom_op
adds about 8 µs a call on the host for its autograd and wrapping layers). They have no autograd
formula: ktune's kernels serve inference (ktune.torch_model falls back to the original module
when autograd needs the graph).

The CUDA kernels of gemm, rmsnorm, rmsnorm_residual and softmax are C++ (ktune/_native.py: built
once with torch.utils.cpp_extension; $KTUNE_TORCH_NATIVE=0 keeps them in Python): an eager call of
those never enters Python. `NATIVE` says whether they serve, `native_reason` why not.

The first call of a key prepares it (look-up, module load, workspace); that cannot happen during
graph capture, so run each shape once before capturing (what torch.compile's "reduce-overhead"
mode and the usual warm-up before torch.cuda.graph do). The runtime of a device is created on
first use from $KTUNE_DB; use_runtime() sets another. Ops of one key on two streams at once share
the runtime's workspace for split-K / split-KV plans: run such streams on separate Runtimes.
"""

import threading
from typing import List

import torch

from . import _native
from .errors import BadInputError
from .runtime import _ON_CLOSE, Runtime

_lock = threading.RLock()  # re-entrant: a Runtime collected while it is held closes through forget()
_runtimes = {}

# The native door (ktune/_native.py): None when the C++ kernels of _native.NATIVE_OPS serve, else
# why the Python kernels below serve them.
native_reason = _native.load(torch)
NATIVE = native_reason is None


def _bind(index: int, runtime) -> None:
    """Tells the native kernels which runtime serves device `index` (None: none; they then open a
    default one). Called wherever _runtimes changes, so the two always agree."""
    if NATIVE:
        handle = getattr(runtime, "_handle", None) if runtime is not None else None
        torch.ops.ktune._native_bind(index, handle.value if handle else 0)


def forget(runtime: Runtime) -> None:
    """Stops serving the ops from `runtime` (if it serves them): the next call of its device makes
    a runtime from $KTUNE_DB, unless use_runtime() names one first. Runtime.close() calls it."""
    with _lock:
        if _runtimes.get(runtime.device) is runtime:
            del _runtimes[runtime.device]
            _bind(runtime.device, None)


def use_runtime(runtime: Runtime) -> None:
    """Serve the ops of `runtime.device` from `runtime` (e.g. one opened on a given database)."""
    with _lock:
        _runtimes[runtime.device] = runtime
        _bind(runtime.device, runtime)


def _runtime_of(index: int) -> Runtime:
    rt = _runtimes.get(index)  # a dict read needs no lock
    if rt is None:
        with _lock:
            rt = _runtimes.get(index)
            if rt is None:
                rt = _runtimes[index] = Runtime(device=index)
                _bind(index, rt)
    return rt


def runtime_for(device: torch.device) -> Runtime:
    return _runtime_of(device.index if device.index is not None else torch.cuda.current_device())


# The current stream's raw handle: torch's private getter costs a fraction of building a
# torch.cuda.Stream (current_stream()); the public path is kept for a torch without it.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _on(t: torch.Tensor):
    """(runtime, stream) of a call whose first tensor is t (a CUDA tensor: the op's CUDA kernel)."""
    index = t.get_device()
    stream = _raw_stream(index) if _raw_stream is not None else torch.cuda.current_stream(t.device).cuda_stream
    return _runtime_of(index), stream


_lib = torch.library.Library("ktune", "DEF")  # noqa: TOR901 - the ops have no autograd formula


def _define(schema, cuda, fake):
    """Defines ktune::<schema> with its CUDA kernel and fake kernel; other devices are refused."""
    name = schema.split("(", 1)[0]
    _lib.define(schema)
    if not (NATIVE and name in _native.NATIVE_OPS):
        _lib.impl(name, cuda, "CUDA")

    def refuse(*args, **kwargs):
        devices = sorted({str(a.device) for a in args if isinstance(a, torch.Tensor)})
        raise BadInputError(f"ktune::{name} runs on CUDA tensors; it was given tensors on {devices}")

    _lib.impl(name, refuse, "CPU")
    torch.library.register_fake(f"ktune::{name}", fake, lib=_lib)
    return getattr(torch.ops.ktune, name).default


def _gemm(a, b, bias=None, layout="nt", epilogue="none"):
    rt, stream = _on(a)
    c = a.new_empty((a.shape[0], b.shape[0] if layout == "nt" else b.shape[1]))
    rt.gemm(a, b, c, bias=bias, layout=layout, epilogue=epilogue, stream=stream)
    return c


def _gemm_fake(a, b, bias=None, layout="nt", epilogue="none"):
    return a.new_empty((a.shape[0], b.shape[0] if layout == "nt" else b.shape[1]))


gemm = _define('gemm(Tensor a, Tensor b, Tensor? bias=None, str layout="nt", str epilogue="none") -> Tensor',
               _gemm, _gemm_fake)
gemm.__doc__ = """a @ b.T (b [n,k], layout "nt": an nn.Linear weight) or a @ b ("nn"), with epilogue
"none", "bias", "silu" or "bias+silu"."""


def _rmsnorm(x, w, eps=1e-6):
    rt, stream = _on(x)
    y = torch.empty_like(x)
    rt.rmsnorm(x, w, y, eps=eps, stream=stream)
    return y


rmsnorm = _define("rmsnorm(Tensor x, Tensor w, float eps=1e-06) -> Tensor", _rmsnorm,
                  lambda x, w, eps=1e-6: torch.empty_like(x))


def _rmsnorm_residual(x, residual, w, eps=1e-6):
    rt, stream = _on(x)
    y = torch.empty_like(x)
    residual_out = torch.empty_like(x)
    rt.rmsnorm(x, w, y, residual=residual, residual_out=residual_out, eps=eps, stream=stream)
    return y, residual_out


rmsnorm_residual = _define("rmsnorm_residual(Tensor x, Tensor residual, Tensor w, float eps=1e-06) -> (Tensor, Tensor)",
                           _rmsnorm_residual,
                           lambda x, residual, w, eps=1e-6: (torch.empty_like(x), torch.empty_like(x)))
rmsnorm_residual.__doc__ = "(rmsnorm(x + residual) * w, x + residual)."


def _rmsnorm_rope(q, k, q_weight, k_weight, cos_sin, positions, eps=1e-6, style="neox"):
    rt, stream = _on(q)
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    rt.rmsnorm_rope(q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out, eps=eps, style=style, stream=stream)
    return q_out, k_out


rmsnorm_rope = _define("rmsnorm_rope(Tensor q, Tensor k, Tensor q_weight, Tensor k_weight, Tensor cos_sin, "
                       'Tensor positions, float eps=1e-06, str style="neox") -> (Tensor, Tensor)',
                       _rmsnorm_rope,
                       lambda q, k, *args, **kwargs: (torch.empty_like(q), torch.empty_like(k)))
rmsnorm_rope.__doc__ = "Per-head RMSNorm of q [tokens, heads_q, d] and k [tokens, heads_kv, d] with rotary positions."


def _rope_append(q, k, v, cos_sin, positions, k_cache, v_cache, q_weight=None, k_weight=None, block_table=None,
                 seq_tokens=1, eps=1e-6, style="neox"):
    rt, stream = _on(q)
    q_out = torch.empty_like(q)
    rt.rope_append(q, k, v, cos_sin, positions, k_cache, v_cache, q_out=q_out, q_weight=q_weight, k_weight=k_weight,
                   block_table=block_table, seq_tokens=seq_tokens, eps=eps, style=style, stream=stream)
    return q_out


rope_append = _define("rope_append(Tensor q, Tensor k, Tensor v, Tensor cos_sin, Tensor positions, "
                      "Tensor(a!) k_cache, Tensor(b!) v_cache, Tensor? q_weight=None, Tensor? k_weight=None, "
                      'Tensor? block_table=None, int seq_tokens=1, float eps=1e-06, str style="neox") -> Tensor',
                      _rope_append, lambda q, *args, **kwargs: torch.empty_like(q))
rope_append.__doc__ = """Rotated q [tokens, heads_q, d] (a new tensor); k rotated and v copied into
k_cache and v_cache in place at positions (contiguous [sequences, heads_kv, seq_max, d], or paged
[num_blocks, heads_kv, block_size, d] with block_table). q_weight and k_weight: RMSNorm first."""


def _softmax(x, scale=1.0, mask="none", lengths=None):
    rt, stream = _on(x)
    y = torch.empty_like(x)
    rt.softmax(x, y, scale=scale, mask=mask, lengths=lengths, stream=stream)
    return y


softmax = _define('softmax(Tensor x, float scale=1.0, str mask="none", Tensor? lengths=None) -> Tensor', _softmax,
                  lambda x, *args, **kwargs: torch.empty_like(x))


def _swiglu(x):
    rt, stream = _on(x)
    out = x.new_empty((x.shape[0], x.shape[1] // 2))
    rt.swiglu(x=x, out=out, stream=stream)
    return out


swiglu = _define("swiglu(Tensor x) -> Tensor", _swiglu, lambda x: x.new_empty((x.shape[0], x.shape[1] // 2)))
swiglu.__doc__ = "silu(x[:, :i]) * x[:, i:] for x [m, 2i]."


def _decode_attention(q, k_cache, v_cache, context_lens=None, scale=0.0, block_table=None):
    rt, stream = _on(q)
    o = torch.empty_like(q)
    rt.decode_attention(q, k_cache, v_cache, o, context_lens=context_lens, scale=scale, block_table=block_table,
                        stream=stream)
    return o


decode_attention = _define("decode_attention(Tensor q, Tensor k_cache, Tensor v_cache, Tensor? context_lens=None, "
                           "float scale=0.0, Tensor? block_table=None) -> Tensor", _decode_attention,
                           lambda q, *args, **kwargs: torch.empty_like(q))
decode_attention.__doc__ = """Attention of q [batch, heads_q, d] over k_cache, v_cache [batch, heads_kv,
seq_max, d], sequence b over its first context_lens[b] keys (all seq_max without context_lens).
With block_table (int32 [batch, max_blocks]) the caches are paged: [num_blocks, heads_kv, block_size, d]."""


def _fp8_gemm(a, b, a_scale, b_scale):
    rt, stream = _on(a)
    c = torch.empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16, device=a.device)
    rt.fp8_gemm(a, b, a_scale, b_scale, c, stream=stream)
    return c


fp8_gemm = _define("fp8_gemm(Tensor a, Tensor b, Tensor a_scale, Tensor b_scale) -> Tensor", _fp8_gemm,
                   lambda a, b, a_scale, b_scale: torch.empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16,
                                                              device=a.device))
fp8_gemm.__doc__ = "bf16 (a @ b.T) * scales for float8_e4m3fn a [m,k], b [n,k]; scales of 1 value each or [m], [n]."

_ON_CLOSE.append(forget)  # a closing runtime's handle is never launched from

__all__: List[str] = ["NATIVE", "native_reason", "use_runtime", "forget", "runtime_for", "gemm", "rmsnorm", "rmsnorm_residual", "rmsnorm_rope",
                      "rope_append", "softmax", "swiglu", "decode_attention", "fp8_gemm"]

from .torch_model import Optimized, optimize  # noqa: E402 - needs the ops above

__all__ += ["optimize", "Optimized"]
