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

This file swaps the modules and holds what they share (Optimized); their forwards are in
_torch_forwards.py, the doors to ktune and the fused projections in _torch_doors.py.
"""

import inspect
import threading

import torch

from . import torch as _ops
from ._torch_doors import _deciding, _unfuse
from ._torch_forwards import _FORWARDS, _FUSED, STEP_POSITIONS
from .errors import BadInputError, NotFoundError
from .runtime import Runtime

_RMSNORM_CLASSES = ("LlamaRMSNorm", "MistralRMSNorm", "Qwen2RMSNorm", "Qwen3RMSNorm")
_ATTENTION_CLASSES = ("LlamaAttention", "MistralAttention", "Qwen2Attention", "Qwen3Attention")
_MLP_CLASSES = ("LlamaMLP", "MistralMLP", "Qwen2MLP", "Qwen3MLP")
_LAYER_CLASSES = ("LlamaDecoderLayer", "MistralDecoderLayer", "Qwen2DecoderLayer", "Qwen3DecoderLayer")


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
