"""ctypes declarations of include/ktune/ktune.h and include/ktune/ktune_runtime.h (field for field)."""

import ctypes as C

from . import _library
from .errors import from_code

_p = C.c_void_p
_i64 = C.c_int64


class RuntimeOptions(C.Structure):
    _fields_ = [("db_path", C.c_char_p), ("device", C.c_int), ("on_miss", C.c_int), ("compile_on_miss", C.c_int)]


class PlanInfo(C.Structure):
    _fields_ = [("source", C.c_int), ("config_name", C.c_char * 160), ("tuned_shape", C.c_char * 96),
                ("tuned_median_us", C.c_double), ("launches", C.c_size_t), ("workspace_bytes", C.c_size_t)]


class GemmArgs(C.Structure):
    _fields_ = [("a", _p), ("b", _p), ("c", _p), ("bias", _p), ("m", _i64), ("n", _i64), ("k", _i64),
                ("lda", _i64), ("ldb", _i64), ("ldc", _i64), ("dtype", C.c_int), ("layout", C.c_int),
                ("epilogue", C.c_int), ("workspace", _p), ("workspace_bytes", C.c_size_t)]


class RmsNormArgs(C.Structure):
    _fields_ = [("x", _p), ("residual", _p), ("w", _p), ("y", _p), ("residual_out", _p), ("rows", _i64),
                ("hidden", _i64), ("eps", C.c_float), ("dtype", C.c_int)]


class RmsNormRopeArgs(C.Structure):
    _fields_ = [("q", _p), ("k", _p), ("q_weight", _p), ("k_weight", _p), ("cos_sin", _p), ("positions", _p),
                ("q_out", _p), ("k_out", _p), ("tokens", _i64), ("heads_q", _i64), ("heads_kv", _i64),
                ("head_dim", _i64), ("max_pos", _i64), ("eps", C.c_float), ("style", C.c_int),
                ("dtype", C.c_int)]


class RopeAppendArgs(C.Structure):
    _fields_ = [("q", _p), ("k", _p), ("v", _p), ("q_weight", _p), ("k_weight", _p), ("cos_sin", _p),
                ("positions", _p), ("block_table", _p), ("q_out", _p), ("k_cache", _p), ("v_cache", _p),
                ("tokens", _i64), ("heads_q", _i64), ("heads_kv", _i64), ("head_dim", _i64), ("rot_dim", _i64),
                ("seq_tokens", _i64), ("cache_rows", _i64), ("max_blocks", _i64), ("num_blocks", _i64),
                ("max_pos", _i64), ("eps", C.c_float), ("style", C.c_int), ("dtype", C.c_int)]


class SoftmaxArgs(C.Structure):
    _fields_ = [("x", _p), ("y", _p), ("lengths", _p), ("rows", _i64), ("cols", _i64), ("scale", C.c_float),
                ("mask", C.c_int), ("dtype", C.c_int), ("workspace", _p), ("workspace_bytes", C.c_size_t)]


class SwigluArgs(C.Structure):
    _fields_ = [("x", _p), ("gate", _p), ("up", _p), ("out", _p), ("m", _i64), ("i", _i64), ("dtype", C.c_int)]


class DecodeAttentionArgs(C.Structure):
    _fields_ = [("q", _p), ("k", _p), ("v", _p), ("o", _p), ("context_lens", _p), ("batch", _i64),
                ("heads_q", _i64), ("heads_kv", _i64), ("seq", _i64), ("seq_max", _i64), ("head_dim", _i64),
                ("scale", C.c_float), ("dtype", C.c_int), ("workspace", _p), ("workspace_bytes", C.c_size_t),
                ("block_table", _p), ("block_size", _i64), ("max_blocks", _i64), ("num_blocks", _i64)]


class Fp8GemmArgs(C.Structure):
    _fields_ = [("a", _p), ("b", _p), ("a_scale", _p), ("b_scale", _p), ("c", _p), ("m", _i64), ("n", _i64),
                ("k", _i64), ("scaling", C.c_int), ("workspace", _p), ("workspace_bytes", C.c_size_t)]


# Operator name -> its args struct (and the C function suffix).
OPS = {"gemm": GemmArgs, "rmsnorm": RmsNormArgs, "rmsnorm_rope": RmsNormRopeArgs, "rope_append": RopeAppendArgs,
       "softmax": SoftmaxArgs, "swiglu": SwigluArgs, "decode_attention": DecodeAttentionArgs,
       "fp8_gemm": Fp8GemmArgs}

DTYPES = {"f32": 0, "f16": 1, "bf16": 2, "fp8e4m3": 3}
MISS = {"nearest": 0, "default": 1, "error": 2}
SOURCES = {0: "tuned", 1: "nearest", 2: "default"}

_declared = set()


def runtime_lib():
    """libktune_runtime.so with its prototypes declared."""
    lib = _library.load("runtime")
    if "runtime" in _declared:
        return lib
    lib.ktune_runtime_options_init.argtypes = [C.POINTER(RuntimeOptions)]
    lib.ktune_runtime_options_init.restype = None
    lib.ktune_runtime_create.argtypes = [C.POINTER(RuntimeOptions), C.POINTER(_p)]
    lib.ktune_runtime_create.restype = C.c_int
    lib.ktune_runtime_destroy.argtypes = [_p]
    lib.ktune_runtime_destroy.restype = None
    lib.ktune_runtime_record_misses.argtypes = [_p, C.c_char_p]
    lib.ktune_runtime_record_misses.restype = C.c_int
    for op, struct in OPS.items():
        init = getattr(lib, f"ktune_{op}_args_init")
        init.argtypes = [C.POINTER(struct)]
        init.restype = None
        prepare = getattr(lib, f"ktune_runtime_prepare_{op}")
        prepare.argtypes = [_p, C.POINTER(struct), C.POINTER(PlanInfo)]
        prepare.restype = C.c_int
        launch = getattr(lib, f"ktune_runtime_{op}")
        launch.argtypes = [_p, C.POINTER(struct), _p]
        launch.restype = C.c_int
    lib.ktune_runtime_prepare_kernel.argtypes = [_p, C.c_char_p, C.c_char_p, C.c_char_p, C.POINTER(PlanInfo),
                                                  C.POINTER(C.c_int)]
    lib.ktune_runtime_prepare_kernel.restype = C.c_int
    lib.ktune_runtime_launch.argtypes = [_p, C.c_char_p, C.c_char_p, C.c_char_p, C.POINTER(_p), C.c_size_t, _p]
    lib.ktune_runtime_launch.restype = C.c_int
    lib.ktune_runtime_gpu_name.argtypes = [_p]
    lib.ktune_runtime_gpu_name.restype = C.c_char_p
    for f in (lib.ktune_runtime_tuned_keys, lib.ktune_runtime_prepared_plans):
        f.argtypes = [_p]
        f.restype = C.c_size_t
    lib.ktune_runtime_last_error.argtypes = []
    lib.ktune_runtime_last_error.restype = C.c_char_p
    lib.ktune_runtime_version.argtypes = []
    lib.ktune_runtime_version.restype = C.c_char_p
    _declared.add("runtime")
    return lib


def lookup_lib():
    """libktune.so with its prototypes declared."""
    lib = _library.load("lookup")
    if "lookup" in _declared:
        return lib
    lib.ktune_open.argtypes = [C.c_char_p, C.POINTER(_p)]
    lib.ktune_open.restype = C.c_int
    lib.ktune_lookup.argtypes = [_p, C.c_char_p, C.c_char_p, C.c_char_p, C.c_char_p, C.c_char_p, C.c_int,
                                 C.POINTER(C.c_void_p)]
    lib.ktune_lookup.restype = C.c_int
    lib.ktune_free_string.argtypes = [C.c_void_p]
    lib.ktune_free_string.restype = None
    lib.ktune_close.argtypes = [_p]
    lib.ktune_close.restype = None
    lib.ktune_last_error.argtypes = []
    lib.ktune_last_error.restype = C.c_char_p
    lib.ktune_version.argtypes = []
    lib.ktune_version.restype = C.c_char_p
    _declared.add("lookup")
    return lib


def check(code, lib, last_error_name):
    """Raises the ktune.Error subclass of a non-zero return code with the library's message."""
    if code != 0:
        message = getattr(lib, last_error_name)().decode("utf-8", "replace")
        raise from_code(code, message)
