"""ktune.Runtime's argument checks and the C structs they fill, without a GPU: the launch
functions of the real library are replaced by a recorder; the _init functions are the library's."""

import ctypes as C

import pytest

import ktune
from ktune import _abi
from ktune.runtime import Runtime
from conftest import CudaArray


class Recorder:
    """The real libktune_runtime.so, except that prepare/launch calls are recorded, not made."""

    def __init__(self):
        self.real = _abi.runtime_lib()
        self.calls = []

    def __getattr__(self, name):
        if name.startswith("ktune_runtime_") and not name.endswith(("last_error", "version")):
            op = name[len("ktune_runtime_"):]

            def record(handle, args_ref, third):
                struct = args_ref._obj  # a ctypes.byref() of the args struct
                copy = type(struct).from_buffer_copy(struct)
                self.calls.append((op, copy, third))
                return 0
            return record
        return getattr(self.real, name)


@pytest.fixture
def rt():
    r = Runtime.__new__(Runtime)
    r._lib = Recorder()
    r._handle = C.c_void_p(1)
    r.device = 0
    yield r
    r._handle = None


def test_struct_layouts_match_the_library_defaults():
    lib = _abi.runtime_lib()
    g = _abi.GemmArgs()
    lib.ktune_gemm_args_init(C.byref(g))
    assert (g.dtype, g.layout, g.epilogue, g.m, g.lda, g.workspace_bytes) == (2, 0, 0, 0, 0, 0)
    n = _abi.RmsNormArgs()
    lib.ktune_rmsnorm_args_init(C.byref(n))
    assert n.eps == pytest.approx(1e-6) and n.dtype == 2
    r = _abi.RmsNormRopeArgs()
    lib.ktune_rmsnorm_rope_args_init(C.byref(r))
    assert r.eps == pytest.approx(1e-6) and r.dtype == 2 and r.style == 0
    s = _abi.SoftmaxArgs()
    lib.ktune_softmax_args_init(C.byref(s))
    assert s.scale == 1.0 and s.mask == 0 and s.dtype == 2
    d = _abi.DecodeAttentionArgs()
    lib.ktune_decode_attention_args_init(C.byref(d))
    assert d.scale == 0.0 and d.dtype == 2 and d.workspace_bytes == 0
    o = _abi.RuntimeOptions()
    lib.ktune_runtime_options_init(C.byref(o))
    assert (o.device, o.on_miss, o.compile_on_miss) == (0, 0, 1)


def test_gemm_reads_dimensions_strides_and_dtype_from_the_tensors(rt):
    a = CudaArray((16, 1024), ptr=0x1000)
    w = CudaArray((3072, 1024), ptr=0x2000)
    # c: the q columns of a fused qkv output [16, 3072 + ...]: rows strided by 4096
    c = CudaArray((16, 3072), ptr=0x3000, strides=(4096, 1))
    rt.gemm(a, w, c, stream=0x55)
    op, args, stream = rt._lib.calls[-1]
    assert op == "gemm" and stream == 0x55
    assert (args.m, args.n, args.k) == (16, 3072, 1024)
    assert (args.lda, args.ldb, args.ldc) == (1024, 1024, 4096)
    assert (args.a, args.b, args.c) == (0x1000, 0x2000, 0x3000)
    assert args.dtype == _abi.DTYPES["f16"] and args.layout == 0 and args.epilogue == 0


def test_gemm_passes_the_row_strides_of_column_slices(rt):
    # x: columns [64, 64 + 1024) of a [16, 2048] activation; w: an "nn" weight [1024, 3072] whose rows
    # are 3080 apart; c: the k slice of a fused [16, 4096] qkv output. One-row views are contiguous.
    x = CudaArray((16, 1024), ptr=0x1080, strides=(2048, 1))
    w = CudaArray((1024, 3072), ptr=0x2000, strides=(3080, 1))
    c = CudaArray((16, 3072), ptr=0x3000, strides=(4096, 1))
    rt.gemm(x, w, c, layout="nn")
    _, args, _ = rt._lib.calls[-1]
    assert (args.lda, args.ldb, args.ldc) == (2048, 3080, 4096)
    assert (args.m, args.n, args.k, args.a) == (16, 3072, 1024, 0x1080)
    rt.gemm(CudaArray((1, 64), strides=(9999, 1)), CudaArray((32, 64)), CudaArray((1, 32), strides=(7, 1)))
    _, args, _ = rt._lib.calls[-1]
    assert (args.lda, args.ldb, args.ldc) == (64, 64, 32)


def test_gemm_nn_layout_and_bias_epilogue(rt):
    a, b, c, bias = CudaArray((8, 64)), CudaArray((64, 96)), CudaArray((8, 96)), CudaArray((96,), ptr=0x4000)
    rt.gemm(a, b, c, bias=bias, layout="nn", epilogue="bias+silu")
    _, args, _ = rt._lib.calls[-1]
    assert (args.m, args.n, args.k, args.layout, args.epilogue, args.bias) == (8, 96, 64, 1, 3, 0x4000)


@pytest.mark.parametrize("call, message", [
    (lambda rt: rt.gemm(CudaArray((8, 64)), CudaArray((32, 65)), CudaArray((8, 32))), "b has shape [32, 65]"),
    (lambda rt: rt.gemm(CudaArray((8, 64)), CudaArray((32, 64)), CudaArray((8, 33))), "c has shape [8, 33]"),
    (lambda rt: rt.gemm(CudaArray((8, 64)), CudaArray((32, 64), typestr="<f4", itemsize=4), CudaArray((8, 32))),
     "b is f32"),
    (lambda rt: rt.gemm(CudaArray((8, 64)), CudaArray((32, 64)), CudaArray((8, 32)), epilogue="bias"),
     "bias is required"),
    (lambda rt: rt.gemm(CudaArray((8, 64)), CudaArray((32, 64)), CudaArray((8, 32)), layout="tn"), "layout='tn'"),
    (lambda rt: rt.gemm(CudaArray((8, 64), strides=(1, 8)), CudaArray((32, 64)), CudaArray((8, 32))),
     "columns are strided"),
    (lambda rt: rt.gemm(CudaArray((8, 64), strides=(0, 1)), CudaArray((32, 64)), CudaArray((8, 32))),
     "a's rows overlap"),
    (lambda rt: rt.gemm(CudaArray((8, 64)), CudaArray((32, 64)), CudaArray((8, 32), strides=(31, 1))),
     "c's rows overlap"),
    (lambda rt: rt.rmsnorm(CudaArray((4, 64)), CudaArray((63,)), CudaArray((4, 64))), "w has shape [63]"),
    (lambda rt: rt.rmsnorm(CudaArray((4, 64), strides=(128, 1)), CudaArray((64,)), CudaArray((4, 64))),
     "not contiguous"),
    (lambda rt: rt.rmsnorm(CudaArray((4, 64)), CudaArray((64,)), CudaArray((4, 64)),
                           residual_out=CudaArray((4, 64))), "residual_out given without residual"),
    (lambda rt: rt.softmax(CudaArray((4, 64)), CudaArray((4, 64)), mask="padding"), "lengths is required"),
    (lambda rt: rt.softmax(CudaArray((4, 64)), CudaArray((4, 64)), mask="padding",
                           lengths=CudaArray((4,), typestr="<f4", itemsize=4)), "lengths is f32"),
    (lambda rt: rt.swiglu(x=CudaArray((4, 64)), out=CudaArray((4, 31))), "x has shape [4, 64]"),
    (lambda rt: rt.decode_attention(CudaArray((2, 8, 128)), CudaArray((2, 2, 100, 64)), CudaArray((2, 2, 100, 64)),
                                    CudaArray((2, 8, 128))), "k_cache has shape"),
    (lambda rt: rt.gemm(object(), CudaArray((32, 64)), CudaArray((8, 32))), "not a CUDA tensor"),
    (lambda rt: rt.gemm(CudaArray((8, 64)), CudaArray((32, 64)), CudaArray((8, 32)), stream="s"), "stream"),
])
def test_bad_calls_raise_value_errors_before_any_launch(rt, call, message):
    with pytest.raises(ktune.BadInputError) as e:
        call(rt)
    assert isinstance(e.value, ValueError)
    assert message in str(e.value)
    assert rt._lib.calls == []


def test_decode_attention_keys_on_the_cache_and_passes_lengths(rt):
    q, k, v, o = CudaArray((3, 16, 128)), CudaArray((3, 4, 700, 128)), CudaArray((3, 4, 700, 128)), CudaArray((3, 16, 128))
    lens = CudaArray((3,), typestr="<i4", itemsize=4, ptr=0x5000)
    info = rt.prepare_decode_attention(q, k, v, o, context_lens=lens)
    assert info is not None
    op, args, _ = rt._lib.calls[-1]
    assert op == "prepare_decode_attention"
    assert (args.batch, args.heads_q, args.heads_kv, args.seq, args.seq_max, args.head_dim) == (3, 16, 4, 700, 700, 128)
    assert args.context_lens == 0x5000


def test_runtime_without_a_gpu_raises_no_device():
    try:
        r = ktune.Runtime()
    except ktune.NoDeviceError as e:
        assert e.code == 3
        return
    r.close()
    pytest.skip("a GPU is present here: the gpu tests cover the runtime")
