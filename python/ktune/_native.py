"""The native door of ktune.torch: the CUDA kernels of its most-called operators (gemm, rmsnorm,
rmsnorm_residual, softmax, and a decoder layer's rope_append and decode_attention) registered
from C++ (csrc/torch_ops.cpp), so an eager call of torch.ops.ktune.<op> never enters Python. Built once per torch and library with
torch.utils.cpp_extension (into torch's extension folder, $TORCH_EXTENSIONS_DIR or
~/.cache/torch_extensions) and imported as a Python module, which registers the operators.

The same library is a Python module (MODULE): ktune.Runtime's native doors, the out-variants its
methods call on torch tensors with their outputs given (runtime_door; today softmax, the one op
whose torch call costs less than the Runtime's ctypes path).

$KTUNE_TORCH_NATIVE chooses: "auto" (default: build or load it where torch has CUDA and a C++
compiler works; otherwise, or when the build fails, the Python kernels serve, with one warning
naming the reason, none when no CUDA device is visible), "1" (required: a failure raises) or "0"
(the Python kernels only).
"""

import hashlib
import importlib
import os
import pathlib
import sys
import warnings

from . import _abi

NATIVE_OPS = ("gemm", "rmsnorm", "rmsnorm_residual", "softmax", "rope_append", "decode_attention")
_SOURCE = pathlib.Path(__file__).resolve().parent / "csrc" / "torch_ops.cpp"
_NO_DEVICE = "no CUDA device is visible"

MODULE = None  # the loaded extension as a Python module (None: the native operators do not serve)
_doors = {}  # a tensor class -> MODULE when its objects take the native doors, else None


def _header_dir():
    """The folder holding ktune/ktune_runtime.h: $KTUNE_INCLUDE, the repository this package sits
    in, or the install prefix's include/."""
    here = pathlib.Path(__file__).resolve().parent
    candidates = [os.environ.get("KTUNE_INCLUDE")] + [str(p / "include") for p in here.parents]
    for c in filter(None, candidates):
        if (pathlib.Path(c) / "ktune" / "ktune_runtime.h").is_file():
            return pathlib.Path(c)
    return None


def _runtime_path():
    """The file of the libktune_runtime.so this process loaded (the extension links that one)."""
    lib = _abi.runtime_lib()
    name = pathlib.Path(lib._name)
    if name.is_absolute():
        return name.resolve()
    with open("/proc/self/maps") as maps:  # loaded by name through the system's loader path
        for line in maps:
            path = line.split()[-1]
            if "/libktune_runtime.so" in path:
                return pathlib.Path(path)
    return None


def load(torch):
    """Loads (building if needed) the native operators. Returns None when they serve, else the
    reason the Python kernels serve instead."""
    mode = os.environ.get("KTUNE_TORCH_NATIVE", "auto").strip().lower()
    if mode in ("0", "off", "no", "false"):
        return "KTUNE_TORCH_NATIVE=0"
    if mode not in ("auto", "1", "on", "yes", "true"):
        raise ValueError(f"KTUNE_TORCH_NATIVE={mode!r}: use auto, 1 or 0")
    try:
        reason = _build_and_load(torch)
    except Exception as e:  # the compiler's or loader's own error, whatever its type
        reason = f"{type(e).__name__}: {e}"
    if reason is not None:
        if mode != "auto":
            raise RuntimeError(f"ktune.torch: the native operators are required (KTUNE_TORCH_NATIVE={mode}) "
                               f"but not available: {reason}")
        if reason != _NO_DEVICE and torch.version.cuda is not None:
            warnings.warn(f"ktune.torch: the native operators are not available ({reason}); "
                          "the Python kernels serve (a few microseconds more a call)", stacklevel=3)
    return reason


def _build_and_load(torch):
    if torch.version.cuda is None:
        return "this torch has no CUDA"
    if not torch.cuda.is_available():
        return _NO_DEVICE  # nothing to build for, nor to run on
    include = _header_dir()
    if include is None:
        return "ktune/ktune_runtime.h not found (set KTUNE_INCLUDE)"
    library = _runtime_path()
    if library is None:
        return "the loaded libktune_runtime.so could not be found"
    from torch.utils import cpp_extension
    # One build per source, header and library file: a new ktune builds anew.
    digest = hashlib.sha256()
    for part in (_SOURCE, include / "ktune" / "ktune_runtime.h", include / "ktune" / "ktune.h"):
        digest.update(part.read_bytes())
    digest.update(str(library).encode())
    name = "ktune_torch_native_" + digest.hexdigest()[:12]
    folder = pathlib.Path(cpp_extension._get_build_directory(name, verbose=False))
    if not (folder / f"{name}.so").exists():
        print(f"ktune.torch: building the native operators once (about a minute) into {folder}", file=sys.stderr)
    # imported as a Python module; loading it registers the operators (TORCH_LIBRARY) as well
    global MODULE
    MODULE = cpp_extension.load(name=name, sources=[str(_SOURCE)], extra_include_paths=[str(include)],
                                extra_cflags=["-O2"], extra_ldflags=[str(library), f"-Wl,-rpath,{library.parent}"],
                                with_cuda=True, is_python_module=True, verbose=False)
    return None


def runtime_door(tensor):
    """The module of ktune.Runtime's native doors (MODULE) when `tensor` takes them, else None. Only
    a plain torch.Tensor does (a subclass may mean more than its storage); the first such call
    imports ktune.torch, which loads the native operators (building them once, as its import
    does), and a torch without them keeps the Runtime on its ctypes path."""
    kind = type(tensor)
    door = _doors.get(kind, _doors)
    if door is _doors:
        door = _doors[kind] = _door_for(kind)
    return door


def _door_for(kind):
    torch = sys.modules.get("torch")
    if torch is None or kind is not torch.Tensor:
        return None
    try:
        importlib.import_module(f"{__package__}.torch")  # its import loads MODULE
    except Exception:  # noqa: BLE001 - whatever stops ktune.torch leaves the ctypes path serving
        return None
    return MODULE
