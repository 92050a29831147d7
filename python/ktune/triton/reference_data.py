"""A torch function as a Triton kernel's reference (`TorchReference`): computed once a key, on inputs
made here as the description's fills say (or a call's own tensors), and saved beside the
description as `NAME.data/DTYPE/SHAPE/ARG.bin` (each input buffer, and each output's expected
values: float32 for a floating-point output), raw little-endian values. The description's
`[reference] data` names that folder: ktune's worker then fills every config's inputs from those
files and compares its outputs with the saved ones (docs/byo.md), so every config and the
reference see the same inputs. Needs torch.
"""

import hashlib
import inspect
import os
import pathlib
import shutil
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from ..errors import BadInputError
from ..tensors import TORCH_NAMES

_INTEGER = ("i32", "i64", "u8")  # buffers of these hold integers


@dataclass(frozen=True)
class TorchReference:
    """A torch function as the reference. It is called once a key with the kernel's arguments by
    name: each input buffer a 1-D tensor of its elements (the problem's dtype, or the argument's
    own type), each output a 1-D tensor to write (float32 for a floating-point output, so the
    reference keeps its precision; an integer output its type), each scalar its value; on
    `device` ("cuda" by default). What it writes is the expected output."""
    function: Callable
    tolerance: Mapping[str, object] = field(default_factory=dict)
    device: str = "cuda"

    def producer(self):
        """What computes the outputs, as the description names it (part of the kernel's hash): the
        function's module, name and a hash of its source."""
        fn = self.function
        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):
            source = repr(getattr(fn, "__code__", fn))
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        return f"torch reference {getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}, " \
               f"source {digest}"


def folder_name(description_name):
    return f"{description_name}.data"


def _number(expression, values, what):
    from .description import _evaluate  # description.py imports this module
    v = _evaluate(expression, values)
    if v is not None:
        return v
    try:
        return float(expression)
    except (TypeError, ValueError):
        raise BadInputError(f"{what} = {expression!r}: the data reference evaluates integers and sums, differences "
                            "and products of dimensions only") from None


def _input(torch, arg, kind, n, values, generator, device, name):
    """An input buffer of `n` values of ktune type `kind`, as its fill says (core/buffer_fill.hpp)."""
    dtype = getattr(torch, TORCH_NAMES[kind])
    fill = dict(arg.fill or {})
    integer = kind in _INTEGER
    if "pattern" in fill:
        pattern = torch.tensor([float(v) for v in fill["pattern"]], dtype=torch.float64)
        out = pattern.repeat(-(-n // len(pattern)))[:n]
    elif "sequence" in fill:
        seq = dict(fill["sequence"])
        start = int(_number(seq.get("start", 0), values, f"arg {name}.fill.sequence.start"))
        step = int(_number(seq.get("step", 1), values, f"arg {name}.fill.sequence.step"))
        out = torch.arange(n, dtype=torch.int64) * step + start
        if "modulo" in seq:
            out = torch.remainder(out, int(_number(seq["modulo"], values, f"arg {name}.fill.sequence.modulo")))
    elif "min" in fill or "max" in fill:
        lo = _number(fill.get("min", 0), values, f"arg {name}.fill.min")
        hi = _number(fill.get("max", 0), values, f"arg {name}.fill.max")
        if integer:
            out = torch.randint(int(lo), int(hi) + 1, (n,), generator=generator, dtype=torch.int64)
        else:
            out = torch.rand(n, generator=generator, dtype=torch.float64) * (hi - lo) + lo
    else:
        if integer:
            raise BadInputError(f"arg {name}: an {kind} input needs a range, a pattern or a sequence fill")
        scale = float(fill.get("scale", 1.0))
        magnitude = torch.rand(n, generator=generator, dtype=torch.float64) * 0.75 + 0.25
        sign = torch.randint(0, 2, (n,), generator=generator, dtype=torch.int64) * 2 - 1
        out = magnitude * sign * scale
    # through f32: torch converts float64 to the 8-bit float types only from f32
    return (out if integer else out.to(torch.float32)).to(dtype).to(device)


def _write(path, tensor):
    import torch
    t = tensor.detach().contiguous().cpu()
    t.view(torch.uint8).numpy().tofile(path)


def write_data(description, root_folder, dtype, values, inputs=None, seed=0):
    """Writes the key's files (module docstring) under `root_folder`/NAME.data unless they are there:
    inputs made as the fills say (or taken from `inputs`, {name: tensor} of a call, when each has
    the described element count), the reference called on them, everything saved. Returns the
    key's folder. BadInputError when the reference cannot be computed (its message)."""
    from .description import _shape_values
    reference = description.reference
    try:
        import torch
    except ImportError:
        raise BadInputError(f"{description.name}: a TorchReference needs torch to compute its outputs") from None
    shape = description.shape_of(values)
    key = pathlib.Path(root_folder) / folder_name(description.name) / dtype / shape
    if (key / ".done").is_file():
        return key
    values = _shape_values(shape)
    device = torch.device(reference.device if reference.device != "cuda" or torch.cuda.is_available() else "cpu")
    generator = torch.Generator().manual_seed(int(hashlib.sha256(f"{shape} {dtype} {seed}".encode()).hexdigest()[:8],
                                                  16))
    args, outputs = {}, {}
    for name, a in description.args.items():
        kind = dtype if a.type == "dtype" else a.type
        if a.kind == "scalar":
            v = _number(a.expression, values, f"arg {name}")
            args[name] = int(v) if a.type in _INTEGER else float(v)
            continue
        n = int(_number(a.expression, values, f"arg {name}.elements"))
        if a.kind == "input":
            given = (inputs or {}).get(name)
            if given is not None and hasattr(given, "numel") and given.numel() == n:
                args[name] = given.detach().reshape(-1).to(getattr(torch, TORCH_NAMES[kind])).to(device)
            else:
                args[name] = _input(torch, a, kind, n, values, generator, device, name)
        else:
            out_dtype = getattr(torch, TORCH_NAMES[kind]) if kind in _INTEGER else torch.float32
            args[name] = torch.full((n,), float("nan"), dtype=torch.float32, device=device) \
                if out_dtype == torch.float32 else torch.zeros(n, dtype=out_dtype, device=device)
            outputs[name] = args[name]
    try:
        with torch.no_grad():
            reference.function(**args)
    except Exception as e:
        raise BadInputError(f"{description.name}: the torch reference failed for {shape} {dtype}: "
                            f"{type(e).__name__}: {e}") from e
    tmp = key.with_name(f".{key.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, a in description.args.items():
        if a.kind != "scalar" and (a.kind == "input" or name in outputs):
            _write(tmp / f"{name}.bin", args[name])
    (tmp / ".done").write_text(reference.producer() + "\n")
    try:
        os.replace(tmp, key)  # another process may have written the key first: theirs stands
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return key


def call_inputs(description, nargs) -> Optional[dict]:
    """The input buffers of a call (`nargs` by name) that are tensors, for write_data."""
    return {n: nargs[n] for n, a in description.args.items() if a.kind == "input" and hasattr(nargs.get(n), "numel")}
