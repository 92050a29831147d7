"""What ktune reads of a tensor, from any framework, without importing one.

A tensor is accepted when it is one of:
- a torch-like tensor (data_ptr(), shape, stride(), dtype, device): torch.Tensor;
- an object with __cuda_array_interface__ (version 2 or 3): CuPy, Numba, ...;
- an object with __dlpack__ on a CUDA device: JAX, CuPy, ...
Strides are in elements. Only what a kernel needs is kept: pointer, shape, strides, dtype name,
device ordinal (None when the protocol does not say).
"""

import ctypes as C
from .errors import BadInputError

# dtype names by framework spelling.
_TORCH = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16",
          "torch.float8_e4m3fn": "fp8e4m3", "torch.int32": "i32", "torch.uint8": "u8"}
_TYPESTR = {"<f4": "f32", "<f2": "f16", "<i4": "i32", "|u1": "u8", "<u1": "u8"}
# DLPack (code, bits) -> name; code 0 int, 1 uint, 2 float, 4 bfloat; float8_e4m3fn is code 10.
_DLPACK = {(2, 32): "f32", (2, 16): "f16", (4, 16): "bf16", (0, 32): "i32", (1, 8): "u8", (10, 8): "fp8e4m3"}
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "fp8e4m3": 1, "fp8e5m2": 1, "i32": 4, "i64": 8, "u8": 1}
# ktune's name -> the name of torch's dtype (getattr(torch, ...)); every element type a description takes
TORCH_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "fp8e4m3": "float8_e4m3fn",
               "fp8e5m2": "float8_e5m2", "i32": "int32", "i64": "int64", "u8": "uint8"}

_KDL_CUDA = 2


class View:
    """ptr, shape, strides (elements), dtype name, device ordinal (None when unknown)."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "device")

    def __init__(self, ptr, shape, strides, dtype, device):
        self.ptr, self.shape, self.strides, self.dtype, self.device = ptr, shape, strides, dtype, device

    def __eq__(self, other):
        return isinstance(other, View) and all(getattr(self, f) == getattr(other, f) for f in View.__slots__)

    def __repr__(self):
        return (f"View(ptr={self.ptr:#x}, shape={self.shape}, strides={self.strides}, dtype={self.dtype!r}, "
                f"device={self.device!r})")

    def is_contiguous(self):
        expect = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size != 1 and stride != expect:
                return False
            expect *= size
        return True


class _DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class _DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class _DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", _DLDevice), ("ndim", C.c_int32), ("dtype", _DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class _DLManagedTensor(C.Structure):
    pass


_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", C.c_void_p),
                             ("deleter", C.CFUNCTYPE(None, C.POINTER(_DLManagedTensor)))]

_capsule_get = C.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = C.c_void_p
_capsule_get.argtypes = [C.py_object, C.c_char_p]
_capsule_rename = C.pythonapi.PyCapsule_SetName
_capsule_rename.restype = C.c_int
_capsule_rename.argtypes = [C.py_object, C.c_char_p]


_torch_dtypes = {}  # torch dtype object -> name (filled on first sight of each dtype)


def _from_torch(t, name):
    tdt = t.dtype
    dtype = _torch_dtypes.get(tdt)
    if dtype is None:
        dtype = _TORCH.get(str(tdt))
        if dtype is None:
            raise BadInputError(f"{name}: dtype {tdt} is not one ktune takes")
        _torch_dtypes[tdt] = dtype
    device = t.device
    if device.type != "cuda":
        raise BadInputError(f"{name} is on {device}, not on a CUDA device")
    index = device.index
    return View(t.data_ptr(), tuple(t.shape), tuple(t.stride()), dtype, 0 if index is None else index)


def _from_cai(obj, name):
    cai = obj.__cuda_array_interface__
    dtype = _TYPESTR.get(cai["typestr"])
    if dtype is None:
        raise BadInputError(f"{name}: typestr {cai['typestr']!r} is not one ktune takes")
    shape = tuple(int(s) for s in cai["shape"])
    size = ELEMENT_BYTES[dtype]
    if cai.get("strides") is None:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= s
        strides = tuple(reversed(strides))
    else:
        if any(b % size for b in cai["strides"]):
            raise BadInputError(f"{name}: byte strides {cai['strides']} are not whole elements")
        strides = tuple(int(b) // size for b in cai["strides"])
    return View(int(cai["data"][0]), shape, strides, dtype, None)


def _from_dlpack(obj, name):
    capsule = obj.__dlpack__()
    managed = C.cast(_capsule_get(capsule, b"dltensor"), C.POINTER(_DLManagedTensor)).contents
    t = managed.dl_tensor
    try:
        if t.device.device_type != _KDL_CUDA:
            raise BadInputError(f"{name} is not on a CUDA device (DLPack device type {t.device.device_type})")
        dtype = _DLPACK.get((t.dtype.code, t.dtype.bits))
        if dtype is None or t.dtype.lanes != 1:
            raise BadInputError(f"{name}: DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits) is not one ktune takes")
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.strides:
            strides = tuple(t.strides[i] for i in range(t.ndim))
        else:
            strides, acc = [], 1
            for s in reversed(shape):
                strides.append(acc)
                acc *= s
            strides = tuple(reversed(strides))
        return View(int(t.data or 0) + int(t.byte_offset), shape, strides, dtype, int(t.device.device_id))
    finally:
        # We consumed the capsule: mark it used and release it (the caller's object keeps the memory).
        _capsule_rename(capsule, b"used_dltensor")
        if managed.deleter:
            managed.deleter(C.pointer(managed))


_kinds = {}  # type -> the reader of its objects (the first matching protocol)


def _reader(kind):
    if hasattr(kind, "data_ptr") and hasattr(kind, "stride") and hasattr(kind, "device"):
        return _from_torch
    if hasattr(kind, "__cuda_array_interface__"):
        return _from_cai
    if hasattr(kind, "__dlpack__"):
        return _from_dlpack
    return None


def _reads_torch(kind):
    """Whether objects of class `kind` are read as torch tensors (data_ptr, shape, stride, dtype)."""
    read = _kinds.get(kind)
    if read is None and _reader(kind) is _from_torch:
        read = _kinds[kind] = _from_torch
    return read is _from_torch


def view(obj, name):
    """The View of `obj` (see the module docstring); BadInputError when it is none of those."""
    if obj is None:
        raise BadInputError(f"{name} is None")
    kind = type(obj)
    read = _kinds.get(kind)
    if read is None:
        # The protocol of a class is decided once; an instance attribute (a stand-in object whose
        # __cuda_array_interface__ is set in __init__) is looked for on the object itself.
        read = _reader(kind) or _reader(obj)
        if read is None:
            raise BadInputError(f"{name}: a {kind.__name__} is not a CUDA tensor (no __cuda_array_interface__, "
                                "__dlpack__ or torch.Tensor interface)")
        if _reader(kind) is not None:
            _kinds[kind] = read
    return read(obj, name)


# A dtype as ktune names it, from ktune's names, their long forms and framework dtype objects.
_DTYPE_ALIASES = {"f32": "f32", "float32": "f32", "float": "f32", "f16": "f16", "float16": "f16", "half": "f16",
                  "bf16": "bf16", "bfloat16": "bf16", "fp8e4m3": "fp8e4m3", "float8_e4m3fn": "fp8e4m3",
                  "e4m3": "fp8e4m3", "i32": "i32", "int32": "i32", "u8": "u8", "uint8": "u8"}


def dtype_name(dtype):
    """ktune's name of `dtype`: "bf16", "bfloat16", torch.bfloat16 (or any object whose str() ends
    in such a name, e.g. numpy's) are all "bf16". BadInputError names the ones accepted."""
    text = str(dtype)
    name = _DTYPE_ALIASES.get(text.rsplit(".", 1)[-1].lower())
    if name is None:
        raise BadInputError(f"dtype {dtype!r} is not one ktune names (bf16 / bfloat16 / torch.bfloat16, f16, f32, "
                            "fp8e4m3, i32, u8)")
    return name


def stream_handle(stream):
    """The CUstream of `stream`: None (the legacy default stream), an int handle, an object with
    `cuda_stream` (torch.cuda.Stream) or the __cuda_stream__ protocol."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1]) or None
    if hasattr(stream, "cuda_stream"):
        return int(stream.cuda_stream) or None
    raise BadInputError(f"stream: a {type(stream).__name__} is not a CUDA stream")
