"""One operator call's tensors as ktune.Runtime reads them: each argument's view checked against the
others (dtype, device, shape, contiguity), outputs allocated for torch tensors when left out, and
the stream a launch goes on."""

from .errors import BadInputError
from .tensors import stream_handle, view


def _torch_current_stream(device):
    import torch  # a torch tensor was given: torch is imported already
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


def _torch_bf16():
    import torch
    return torch.bfloat16


def _choice(table, value, name):
    if value not in table:
        raise BadInputError(f"{name}={value!r} is not one of {[k for k in table if k is not None]}")
    return table[value]


class _Op:
    """One call's views, checked against each other."""

    def __init__(self, device, op):
        self.device = device
        self.op = op
        self.dtype = None
        self.torch = None  # the first torch tensor of the call: outputs are allocated like it
        self.result = None  # what a launch returns: the output tensor(s)

    def tensor(self, obj, name, ndim, dtype=None, contiguous=True, optional=False):
        if obj is None:
            if optional:
                return None
            raise BadInputError(f"{self.op}: {name} is required")
        v = view(obj, f"{self.op}: {name}")
        if self.torch is None and hasattr(obj, "new_empty") and hasattr(obj, "is_cuda"):
            self.torch = obj
        if len(v.shape) != ndim:
            raise BadInputError(f"{self.op}: {name} has {len(v.shape)} dimensions {list(v.shape)}; it needs {ndim}")
        if v.device is not None and v.device != self.device:
            raise BadInputError(f"{self.op}: {name} is on cuda:{v.device}; the runtime is on cuda:{self.device}")
        if dtype == "same":
            if self.dtype is None:
                self.dtype = v.dtype
            elif v.dtype != self.dtype:
                raise BadInputError(f"{self.op}: {name} is {v.dtype}; the other tensors are {self.dtype}")
        elif dtype is not None and v.dtype != dtype:
            raise BadInputError(f"{self.op}: {name} is {v.dtype}; it must be {dtype}")
        if contiguous and not v.is_contiguous():
            raise BadInputError(f"{self.op}: {name} (shape {list(v.shape)}, strides {list(v.strides)}) "
                                "is not contiguous")
        return v

    def rows(self, v, name):
        """A 2-D view whose rows may be strided (a column slice of a wider tensor, e.g. of a fused
        QKV projection's output): its row stride in elements. The columns must be contiguous and
        the rows must not overlap (a stride of at least the row's length: not a broadcast)."""
        if v.shape[1] > 1 and v.strides[1] != 1:
            raise BadInputError(f"{self.op}: {name}'s columns are strided ({list(v.strides)}); rows of contiguous "
                                "elements are needed")
        if v.shape[0] <= 1:
            return v.shape[1]
        if v.strides[0] < v.shape[1]:
            raise BadInputError(f"{self.op}: {name}'s rows overlap (shape {list(v.shape)}, strides {list(v.strides)}): "
                                "a row stride of at least the row's length is needed")
        return v.strides[0]

    def output(self, obj, name, shape, dtype="same", torch_dtype=None):
        """The view of output `name` of `shape`; None allocates it (torch tensors: like the call's
        first tensor, or of torch_dtype) and records it as the call's result."""
        if obj is None:
            if self.torch is None:
                raise BadInputError(f"{self.op}: {name} is required (outputs are allocated only for torch tensors)")
            kw = {} if torch_dtype is None else {"dtype": torch_dtype()}
            obj = self.torch.new_empty(tuple(shape), **kw)
        v = self.tensor(obj, name, len(shape), dtype)
        self.shape(v, name, shape, self.op)
        return obj, v

    def stream(self, stream):
        """The CUstream of a launch: `stream`, or for torch tensors and stream None torch's current
        stream of their device (the legacy default stream otherwise)."""
        if stream is None and self.torch is not None:
            return _torch_current_stream(self.device)
        return stream_handle(stream)

    @staticmethod
    def shape(v, name, expected, op):
        if tuple(v.shape) != tuple(expected):
            raise BadInputError(f"{op}: {name} has shape {list(v.shape)}; expected {list(expected)}")
