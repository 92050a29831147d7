"""ktune.Runtime.launch / prepare_kernel (user kernels, docs/byo.md) without a GPU: the C entry points
are replaced by a recorder, which checks what reaches ktune_runtime_launch and what comes back."""

import ctypes as C
import random

import pytest

from ktune import _abi
from ktune.errors import BadInputError
from ktune.runtime import Runtime
from conftest import CudaArray


class UserKernelRecorder:
    def __init__(self):
        self.calls = []

    def ktune_runtime_launch(self, handle, kernel, shape, dtype, array, count, stream):
        self.calls.append((kernel, shape, dtype, [array[i] for i in range(count)], stream))
        return 0

    def ktune_runtime_prepare_kernel(self, handle, kernel, shape, dtype, info_ref, verified_ref):
        info = info_ref._obj
        info.source = 0
        info.config_name = b"transpose.f32.tile32.rows8"
        info.launches = 1
        verified_ref._obj.value = 0
        self.calls.append((kernel, shape, dtype))
        return 0

    def ktune_runtime_destroy(self, handle):
        pass


@pytest.fixture
def rt():
    r = Runtime.__new__(Runtime)
    r._lib = UserKernelRecorder()
    r._launchers, r._templates = {}, {}
    r._handle = C.c_void_p(1)
    r.device = 0
    yield r
    r._handle = None


def test_launch_passes_the_shape_text_dtype_and_buffer_addresses_in_order(rt):
    rows, cols = random.randint(1, 5000), random.randint(1, 5000)
    x_ptr, y_ptr = (random.randrange(1, 1 << 40) * 256 for _ in range(2))
    x = CudaArray((rows, cols), typestr="<f4", ptr=x_ptr, itemsize=4)
    rt.launch("transpose", {"rows": rows, "cols": cols}, "f32", [x, y_ptr])
    kernel, shape, dtype, buffers, stream = rt._lib.calls[0]
    assert kernel == b"transpose"
    assert shape == f"rows={rows},cols={cols}".encode()
    assert dtype == b"f32"
    assert buffers == [x_ptr, y_ptr]
    assert stream is None


def test_prepare_kernel_returns_the_plan_and_whether_it_was_verified(rt):
    info, verified = rt.prepare_kernel("transpose", {"rows": 8, "cols": 16}, "f32")
    assert info.source == "tuned"
    assert info.config_name == "transpose.f32.tile32.rows8"
    assert verified is False
    assert rt._lib.calls[0] == (b"transpose", b"rows=8,cols=16", b"f32")


def test_a_user_kernel_needs_its_dimensions(rt):
    with pytest.raises(BadInputError):
        rt.launch("transpose", {}, "f32", [])
    assert rt._lib.calls == []
