"""`prune_configs_by` as `triton.autotune` takes it: a dict of `early_config_prune(configs,
named_args, **kwargs)` (returns the configs to keep, at least one), `perf_model(**named_args,
**kwargs, **config.all_kwargs())` (an estimated time) and `top_k` (how many of the model's fastest
to keep: an int, or a float <= 1.0, a fraction of the config list), applied in Triton's order.

ktune applies it per key, when the key is tuned: only the kept configs are compiled and measured,
and the kept list is written beside the description's cubins (the folder's index, outside the
kernel's hash), so `ktune tune` run from any process prunes the key the same way. A miss launches
the first kept config. In the process that calls the kernel the functions see the call's
arguments, as in Triton; a key tuned without a call (`Autotuner.tune`, `python -m ktune.triton
tune FILE`) has none, so they see the key instead (`key_arguments`): the scalar arguments' values
and, for each buffer, a `BufferStandIn` with its dtype and element count. A prune that reads only
the key (as Triton's per-key cache assumes) keeps the same configs either way.
"""

from dataclasses import dataclass
from typing import Callable, Optional, Union

from ..errors import BadInputError
from ..tensors import ELEMENT_BYTES, TORCH_NAMES
from .description import Description, _evaluate, _shape_values

FIELDS = ("early_config_prune", "perf_model", "top_k")


class BufferStandIn:
    """A buffer argument of a key tuned without a call: its dtype (torch's, when torch imports; else
    ktune's name, "bf16"), its element count (`numel()`, `shape`) and `element_size()`; no data."""

    def __init__(self, dtype_name, elements):
        self.dtype_name = dtype_name
        self._elements = int(elements)
        self.dtype = _torch_dtype(dtype_name)
        self.shape = (self._elements,)

    def numel(self):
        return self._elements

    def element_size(self):
        return ELEMENT_BYTES[self.dtype_name]

    def __repr__(self):
        return f"BufferStandIn({self.dtype_name}, {self._elements} elements)"


def _torch_dtype(name):
    try:
        import torch
    except ImportError:
        return name
    return getattr(torch, TORCH_NAMES.get(name, ""), name)


def key_arguments(description: Description, values, dtype):
    """The named arguments a key (dimension `values`, a dict, and `dtype`) stands for: each scalar's
    value (its expression evaluated; a float scalar as a float), each buffer a BufferStandIn."""
    out = {}
    for name, a in description.args.items():
        t = dtype if a.type == "dtype" else a.type
        if a.kind == "scalar":
            v = _evaluate(a.expression, values)
            if v is None:
                try:
                    v = float(a.expression)
                except ValueError:
                    v = a.expression  # an expression ktune's harness evaluates; passed as written
            out[name] = v
        else:
            n = _evaluate(a.expression, values)
            out[name] = BufferStandIn(t, n if n is not None else 0)
    return out


@dataclass(frozen=True)
class Pruner:
    """A checked `prune_configs_by` (module docstring)."""
    early_config_prune: Optional[Callable] = None
    perf_model: Optional[Callable] = None
    top_k: Union[int, float] = 1.0

    @staticmethod
    def of(prune_configs_by):
        """The Pruner of `prune_configs_by` (None for None or an empty dict). BadInputError for a
        key Triton does not take, a field that is not callable or a `top_k` Triton refuses."""
        if not prune_configs_by:
            return None
        if not isinstance(prune_configs_by, dict):
            raise BadInputError(f"prune_configs_by must be a dict of {FIELDS}, got {type(prune_configs_by).__name__}")
        unknown = [k for k in prune_configs_by if k not in FIELDS]
        if unknown:
            raise BadInputError(f"prune_configs_by: unknown field(s) {unknown}; Triton takes {list(FIELDS)}")
        p = Pruner(prune_configs_by.get("early_config_prune"), prune_configs_by.get("perf_model"),
                   prune_configs_by.get("top_k", 1.0))
        for name in ("early_config_prune", "perf_model"):
            f = getattr(p, name)
            if f is not None and not callable(f):
                raise BadInputError(f"prune_configs_by['{name}'] is not callable: {f!r}")
        if isinstance(p.top_k, bool) or not (isinstance(p.top_k, int) or (isinstance(p.top_k, float)
                                                                          and p.top_k <= 1.0)):
            raise BadInputError(f"prune_configs_by['top_k'] = {p.top_k!r}: an int, or a float <= 1.0 (a fraction "
                                "of the configs), as triton.autotune takes it")
        return p

    def keep(self, description: Description, named_args, kwargs=None):
        """The configs of `description` to tune for a call of `named_args` (and keyword `kwargs`),
        in Triton's order: early_config_prune, then perf_model's `top_k` fastest. BadInputError when
        the prune keeps none, or keeps a config that is not one of the description's (ktune compiles
        the listed configs ahead of time)."""
        kwargs = dict(kwargs or {})
        configs = description.configs
        kept = configs
        if self.early_config_prune is not None:
            kept = list(self.early_config_prune(configs, named_args, **kwargs))
            if not kept:
                raise BadInputError(f"{description.function}: prune_configs_by's early_config_prune kept no config "
                                    "(it must keep at least one)")
        if self.perf_model is not None:
            top_k = int(len(configs) * self.top_k) if isinstance(self.top_k, float) else self.top_k
            if len(kept) > top_k:
                estimate = {id(c): self.perf_model(**named_args, **kwargs, **c.all_kwargs()) for c in kept}
                kept = sorted(kept, key=lambda c: estimate[id(c)])[:top_k]
        out = []
        for c in kept:
            listed = description.config_of(Description.point(c))
            if listed is None:
                raise BadInputError(f"{description.function}: prune_configs_by kept {c}, which is not one of "
                                    "configs=: ktune compiles the listed configs ahead of time, so a prune may "
                                    "only choose among them")
            if listed not in out:
                out.append(listed)
        if not out:
            raise BadInputError(f"{description.function}: prune_configs_by kept no config (top_k = {self.top_k!r})")
        return out


def kept_for_keys(description: Description, keys, kwargs=None):
    """{(dtype, shape text): kept configs} of the `keys` ((dtype, shape) pairs, the shape a dict or a
    text) by the description's pruner, each seen through `key_arguments`; {} without a pruner."""
    if description.pruner is None:
        return {}
    out = {}
    for dtype, shape in keys:
        text = description.shape_of(shape)
        if (dtype, text) not in out:
            args = key_arguments(description, _shape_values(text), dtype)
            out[(dtype, text)] = description.pruner.keep(description, args, kwargs)
    return out
