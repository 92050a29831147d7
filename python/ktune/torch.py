"""ktune's operators as PyTorch custom ops (torch.library): `torch.ops.ktune.<op>`.

    import torch, ktune.torch
    y = torch.ops.ktune.rmsnorm(x, w, 1e-6)        # or ktune.torch.rmsnorm(x, w)

Each op allocates its outputs (rope_append also writes its k_cache and v_cache in place, which
it declares as mutated), launches the tuned kernel on the current CUDA stream of its inputs'
device and has a fake (meta) implementation, so it runs eagerly, inside torch.cuda.graph
capture, and under torch.compile(fullgraph=True). The first call of a key
prepares it (look-up, module load, workspace); that cannot happen during graph capture, so run
each shape once before capturing (what torch.compile's "reduce-overhead" mode and the usual
warm-up before torch.cuda.graph do). The runtime of a device is created on first use from
$KTUNE_DB; use_runtime() sets another. Ops of one key on two streams at once share the runtime's
workspace for split-K / split-KV plans: run such streams on separate Runtimes.
"""

import threading
from typing import List, Optional, Tuple

import torch

from .runtime import Runtime

_lock = threading.Lock()
_runtimes = {}


def use_runtime(runtime: Runtime) -> None:
    """Serve the ops of `runtime.device` from `runtime` (e.g. one opened on a given database)."""
    with _lock:
        _runtimes[runtime.device] = runtime


def runtime_for(device: torch.device) -> Runtime:
    index = device.index if device.index is not None else torch.cuda.current_device()
    with _lock:
        rt = _runtimes.get(index)
        if rt is None:
            rt = _runtimes[index] = Runtime(device=index)
        return rt


# The current stream's raw handle: torch's private getter costs a fraction of building a
# torch.cuda.Stream (current_stream()); the public path is kept for a torch without it.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(t: torch.Tensor) -> int:
    if _raw_stream is not None:
        index = t.device.index
        return _raw_stream(torch.cuda.current_device() if index is None else index)
    return torch.cuda.current_stream(t.device).cuda_stream


@torch.library.custom_op("ktune::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor] = None, layout: str = "nt",
         epilogue: str = "none") -> torch.Tensor:
    """a @ b.T (b [n,k], layout "nt": an nn.Linear weight) or a @ b ("nn"), with epilogue "none",
    "bias", "silu" or "bias+silu"."""
    n = b.shape[0] if layout == "nt" else b.shape[1]
    c = a.new_empty((a.shape[0], n))
    runtime_for(a.device).gemm(a, b, c, bias=bias, layout=layout, epilogue=epilogue, stream=_stream(a))
    return c


@gemm.register_fake
def _(a, b, bias=None, layout="nt", epilogue="none"):
    n = b.shape[0] if layout == "nt" else b.shape[1]
    return a.new_empty((a.shape[0], n))


@torch.library.custom_op("ktune::rmsnorm", mutates_args=())
def rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    y = torch.empty_like(x)
    runtime_for(x.device).rmsnorm(x, w, y, eps=eps, stream=_stream(x))
    return y


@rmsnorm.register_fake
def _(x, w, eps=1e-6):
    return torch.empty_like(x)


@torch.library.custom_op("ktune::rmsnorm_residual", mutates_args=())
def rmsnorm_residual(x: torch.Tensor, residual: torch.Tensor, w: torch.Tensor,
                     eps: float = 1e-6) -> Tuple[torch.Tensor, torch.Tensor]:
    """(rmsnorm(x + residual) * w, x + residual)."""
    y = torch.empty_like(x)
    residual_out = torch.empty_like(x)
    runtime_for(x.device).rmsnorm(x, w, y, residual=residual, residual_out=residual_out, eps=eps,
                                  stream=_stream(x))
    return y, residual_out


@rmsnorm_residual.register_fake
def _(x, residual, w, eps=1e-6):
    return torch.empty_like(x), torch.empty_like(x)


@torch.library.custom_op("ktune::rmsnorm_rope", mutates_args=())
def rmsnorm_rope(q: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor, k_weight: torch.Tensor,
                 cos_sin: torch.Tensor, positions: torch.Tensor, eps: float = 1e-6,
                 style: str = "neox") -> Tuple[torch.Tensor, torch.Tensor]:
    """Per-head RMSNorm of q [tokens, heads_q, d] and k [tokens, heads_kv, d] with rotary positions."""
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    runtime_for(q.device).rmsnorm_rope(q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out, eps=eps,
                                       style=style, stream=_stream(q))
    return q_out, k_out


@rmsnorm_rope.register_fake
def _(q, k, q_weight, k_weight, cos_sin, positions, eps=1e-6, style="neox"):
    return torch.empty_like(q), torch.empty_like(k)


@torch.library.custom_op("ktune::rope_append", mutates_args=("k_cache", "v_cache"))
def rope_append(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cos_sin: torch.Tensor, positions: torch.Tensor,
                k_cache: torch.Tensor, v_cache: torch.Tensor, q_weight: Optional[torch.Tensor] = None,
                k_weight: Optional[torch.Tensor] = None, block_table: Optional[torch.Tensor] = None,
                seq_tokens: int = 1, eps: float = 1e-6, style: str = "neox") -> torch.Tensor:
    """Rotated q [tokens, heads_q, d] (a new tensor); k rotated and v copied into k_cache and
    v_cache in place at positions (contiguous [sequences, heads_kv, seq_max, d], or paged
    [num_blocks, heads_kv, block_size, d] with block_table). q_weight and k_weight: RMSNorm first."""
    q_out = torch.empty_like(q)
    runtime_for(q.device).rope_append(q, k, v, cos_sin, positions, k_cache, v_cache, q_out=q_out, q_weight=q_weight,
                                      k_weight=k_weight, block_table=block_table, seq_tokens=seq_tokens, eps=eps,
                                      style=style, stream=_stream(q))
    return q_out


@rope_append.register_fake
def _(q, k, v, cos_sin, positions, k_cache, v_cache, q_weight=None, k_weight=None, block_table=None, seq_tokens=1,
      eps=1e-6, style="neox"):
    return torch.empty_like(q)


@torch.library.custom_op("ktune::softmax", mutates_args=())
def softmax(x: torch.Tensor, scale: float = 1.0, mask: str = "none",
            lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
    y = torch.empty_like(x)
    runtime_for(x.device).softmax(x, y, scale=scale, mask=mask, lengths=lengths, stream=_stream(x))
    return y


@softmax.register_fake
def _(x, scale=1.0, mask="none", lengths=None):
    return torch.empty_like(x)


@torch.library.custom_op("ktune::swiglu", mutates_args=())
def swiglu(x: torch.Tensor) -> torch.Tensor:
    """silu(x[:, :i]) * x[:, i:] for x [m, 2i]."""
    out = x.new_empty((x.shape[0], x.shape[1] // 2))
    runtime_for(x.device).swiglu(x=x, out=out, stream=_stream(x))
    return out


@swiglu.register_fake
def _(x):
    return x.new_empty((x.shape[0], x.shape[1] // 2))


@torch.library.custom_op("ktune::decode_attention", mutates_args=())
def decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     context_lens: Optional[torch.Tensor] = None, scale: float = 0.0,
                     block_table: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Attention of q [batch, heads_q, d] over k_cache, v_cache [batch, heads_kv, seq_max, d],
    sequence b over its first context_lens[b] keys (all seq_max without context_lens). With
    block_table (int32 [batch, max_blocks]) the caches are paged: [num_blocks, heads_kv, block_size, d]."""
    o = torch.empty_like(q)
    runtime_for(q.device).decode_attention(q, k_cache, v_cache, o, context_lens=context_lens, scale=scale,
                                           block_table=block_table, stream=_stream(q))
    return o


@decode_attention.register_fake
def _(q, k_cache, v_cache, context_lens=None, scale=0.0, block_table=None):
    return torch.empty_like(q)


@torch.library.custom_op("ktune::fp8_gemm", mutates_args=())
def fp8_gemm(a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor) -> torch.Tensor:
    """bf16 (a @ b.T) * scales for float8_e4m3fn a [m,k], b [n,k]; scales of 1 value each or [m], [n]."""
    c = torch.empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16, device=a.device)
    runtime_for(a.device).fp8_gemm(a, b, a_scale, b_scale, c, stream=_stream(a))
    return c


@fp8_gemm.register_fake
def _(a, b, a_scale, b_scale):
    return torch.empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16, device=a.device)


__all__: List[str] = ["use_runtime", "runtime_for", "gemm", "rmsnorm", "rmsnorm_residual", "rmsnorm_rope",
                      "rope_append", "softmax", "swiglu", "decode_attention", "fp8_gemm"]
