"""ktune.query: the best tuned config of a key, from a ktune database (libktune.so)."""

import ctypes as C
import json

from . import _abi
from .errors import BadInputError
from .tensors import dtype_name


def _shape_text(shape):
    if isinstance(shape, str):
        return shape
    if isinstance(shape, dict):
        return ",".join(f"{k}={int(v)}" for k, v in shape.items())
    raise BadInputError(f"shape must be a string like 'm=16,n=4096,k=4096' or a dict, not {type(shape).__name__}")


def _text(value, name):
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInputError(f"{name} must be a string, not {type(value).__name__}")
    return value.encode()


def query(kernel, shape, dtype, layout=None, gpu=None, db=None, fallback=True):
    """The best config of (gpu, kernel, shape, dtype, layout) as a dict: the document
    `ktune query --json` prints (config_name, config, median_us, tuned_shape, fallback, ...).

    gpu None: the database's only GPU. db None: $KTUNE_DB, else ~/.cache/ktune/ktune.db.
    fallback: answer an untuned shape with the nearest tuned one ("fallback": True says so).
    Raises NotFoundError (no database, nothing tuned), BadInputError, RuntimeFailure.
    """
    lib = _abi.lookup_lib()
    handle = C.c_void_p()
    _abi.check(lib.ktune_open(_text(db, "db"), C.byref(handle)), lib, "ktune_last_error")
    try:
        out = C.c_void_p()
        code = lib.ktune_lookup(handle, _text(gpu, "gpu"), _text(kernel, "kernel"),
                                _shape_text(shape).encode(), dtype_name(dtype).encode(), _text(layout, "layout"),
                                1 if fallback else 0, C.byref(out))
        _abi.check(code, lib, "ktune_last_error")
        try:
            return json.loads(C.string_at(out.value).decode())
        finally:
            lib.ktune_free_string(out)
    finally:
        lib.ktune_close(handle)
