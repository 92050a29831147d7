"""ktune.Runtime's argument checks and the C structs they fill, without a GPU: the launch
functions of the real library are replaced by a recorder; the _init functions are the library's."""

import ctypes as C

import pytest

import ktune
from ktune import _abi
from ktune.runtime import Runtime
from ktune._reuse import CheckedCalls
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


def _recording_runtime():
    r = Runtime.__new__(Runtime)
    r._lib = Recorder()
    r._launchers, r._templates, r._checked = {}, {}, CheckedCalls()
    r._handle = C.c_void_p(1)
    r.device = 0
    return r


@pytest.fixture
def rt():
    r = _recording_runtime()
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
    a = _abi.RopeAppendArgs()
    lib.ktune_rope_append_args_init(C.byref(a))
    assert a.seq_tokens == 1 and a.eps == pytest.approx(1e-6) and a.dtype == 2 and a.style == 0
    s = _abi.SoftmaxArgs()
    lib.ktune_softmax_args_init(C.byref(s))
    assert s.scale == 1.0 and s.mask == 0 and s.dtype == 2
    d = _abi.DecodeAttentionArgs()
    lib.ktune_decode_attention_args_init(C.byref(d))
    assert d.scale == 0.0 and d.dtype == 2 and d.workspace_bytes == 0
    o = _abi.RuntimeOptions()
    lib.ktune_runtime_options_init(C.byref(o))
    assert (o.device, o.on_miss, o.compile_on_miss) == (0, 0, 1)


def test_rope_append_args_are_the_c_struct_field_for_field():
    """The library's init writes the whole C struct over a buffer of sentinel bytes: every field
    lands where the ctypes struct has it (each reads its default, none the sentinel) and nothing
    lands past the ctypes struct's end (the C struct is no larger)."""
    lib = _abi.runtime_lib()
    size = C.sizeof(_abi.RopeAppendArgs)
    assert size == 11 * 8 + 10 * 8 + 3 * 4 + 4  # 11 pointers, 10 int64, eps, style, dtype, the tail padding
    buffer = (C.c_ubyte * (size + 64))(*([0xA5] * (size + 64)))
    args = _abi.RopeAppendArgs.from_buffer(buffer)
    lib.ktune_rope_append_args_init(C.byref(args))
    defaults = {"seq_tokens": 1, "style": 0, "dtype": 2}
    for name, _ in _abi.RopeAppendArgs._fields_:
        value = getattr(args, name)
        if name == "eps":
            assert value == pytest.approx(1e-6), name
        else:
            assert (value or 0) == defaults.get(name, 0), name
    assert bytes(buffer[size:]) == bytes([0xA5] * 64)


def _rope_append_tensors(tokens=8, hq=16, hk=4, d=128, rot=64, cache=(8, 4, 256, 128)):
    return dict(q=CudaArray((tokens, hq, d), ptr=0x1000), k=CudaArray((tokens, hk, d), ptr=0x2000),
                v=CudaArray((tokens, hk, d), ptr=0x3000),
                cos_sin=CudaArray((4096, rot), typestr="<f4", itemsize=4, ptr=0x4000),
                positions=CudaArray((tokens,), typestr="<i4", itemsize=4, ptr=0x5000),
                k_cache=CudaArray(cache, ptr=0x6000), v_cache=CudaArray(cache, ptr=0x7000))


def test_rope_append_contiguous_decode_fills_the_struct(rt):
    t = _rope_append_tensors()
    rt.rope_append(**t, stream=0x55)
    op, args, stream = rt._lib.calls[-1]
    assert op == "rope_append" and stream == 0x55
    assert (args.tokens, args.heads_q, args.heads_kv, args.head_dim, args.rot_dim) == (8, 16, 4, 128, 64)
    assert (args.seq_tokens, args.cache_rows, args.max_blocks, args.num_blocks, args.max_pos) == (1, 256, 0, 0, 4096)
    assert (args.q, args.k, args.v, args.cos_sin, args.positions) == (0x1000, 0x2000, 0x3000, 0x4000, 0x5000)
    assert (args.q_out, args.k_cache, args.v_cache) == (0x1000, 0x6000, 0x7000)  # q_out None: q in place
    assert not args.q_weight and not args.k_weight and not args.block_table
    assert args.style == 0 and args.dtype == _abi.DTYPES["f16"]


def test_rope_append_paged_prefill_with_the_norm_fills_the_struct(rt):
    # One prompt of 40 tokens into a paged cache of 64 blocks of 16 rows; the norm; GPT-J pairs.
    t = _rope_append_tensors(tokens=40, rot=128, cache=(64, 4, 16, 128))
    table = CudaArray((1, 12), typestr="<i4", itemsize=4, ptr=0x8000)
    q_out = CudaArray((40, 16, 128), ptr=0x9000)
    info = rt.prepare_rope_append(**t, q_out=q_out, q_weight=CudaArray((128,), ptr=0xA000),
                                  k_weight=CudaArray((128,), ptr=0xB000), block_table=table, seq_tokens=40,
                                  eps=0.25, style="gptj")
    assert info is not None
    op, args, _ = rt._lib.calls[-1]
    assert op == "prepare_rope_append"
    assert (args.tokens, args.rot_dim, args.seq_tokens, args.cache_rows, args.max_blocks, args.num_blocks) == \
        (40, 128, 40, 16, 12, 64)
    assert (args.block_table, args.q_out, args.q_weight, args.k_weight) == (0x8000, 0x9000, 0xA000, 0xB000)
    assert args.eps == 0.25 and args.style == 1


def _bad_rope_append(rt, **changes):
    t = _rope_append_tensors()
    t.update(changes)
    rt.rope_append(**t)


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
    (lambda rt: rt.swiglu(x=CudaArray((4, 64)), out=CudaArray((4, 31))), "out has shape [4, 31]; expected [4, 32]"),
    (lambda rt: rt.decode_attention(CudaArray((2, 8, 128)), CudaArray((2, 2, 100, 64)), CudaArray((2, 2, 100, 64)),
                                    CudaArray((2, 8, 128))), "k_cache has shape"),
    (lambda rt: _bad_rope_append(rt, k=CudaArray((8, 4, 64))), "k has shape [8, 4, 64]; expected [8, heads_kv, 128]"),
    (lambda rt: _bad_rope_append(rt, v=CudaArray((8, 2, 128))), "v has shape [8, 2, 128]; expected [8, 4, 128]"),
    (lambda rt: _bad_rope_append(rt, q_out=CudaArray((8, 16, 64))), "q_out has shape [8, 16, 64]"),
    (lambda rt: _bad_rope_append(rt, q_weight=CudaArray((128,))), "give both q_weight and k_weight"),
    (lambda rt: _bad_rope_append(rt, cos_sin=CudaArray((4096, 256), typestr="<f4", itemsize=4)),
     "0 < rot_dim <= head_dim 128"),
    (lambda rt: _bad_rope_append(rt, cos_sin=CudaArray((4096, 64))), "cos_sin is f16; it must be f32"),
    (lambda rt: _bad_rope_append(rt, positions=CudaArray((7,), typestr="<i4", itemsize=4)),
     "positions has shape [7]; expected [8]"),
    (lambda rt: _bad_rope_append(rt, positions=CudaArray((8,), typestr="<f4", itemsize=4)), "positions is f32"),
    (lambda rt: _bad_rope_append(rt, k_cache=CudaArray((7, 4, 256, 128)), v_cache=CudaArray((7, 4, 256, 128))),
     "k_cache has shape [7, 4, 256, 128]; expected [sequences >= 8, 4, seq_max, 128] (8 tokens, 1 a sequence)"),
    (lambda rt: _bad_rope_append(rt, v_cache=CudaArray((8, 4, 255, 128))), "v_cache has shape [8, 4, 255, 128]"),
    (lambda rt: _bad_rope_append(rt, k_cache=CudaArray((8, 4, 256, 128), strides=(2 ** 18, 2 ** 16, 128, 1))),
     "k_cache (shape [8, 4, 256, 128], strides"),
    (lambda rt: _bad_rope_append(rt, seq_tokens=0), "seq_tokens=0 must be an int >= 1"),
    (lambda rt: _bad_rope_append(rt, seq_tokens=2.5), "seq_tokens=2.5 must be an int >= 1"),
    (lambda rt: _bad_rope_append(rt, block_table=CudaArray((3, 16), typestr="<i4", itemsize=4), seq_tokens=2),
     "block_table has shape [3, 16]; expected [sequences >= 4, max_blocks] (8 tokens, 2 a sequence)"),
    (lambda rt: _bad_rope_append(rt, block_table=CudaArray((8, 16))), "block_table is f16; it must be i32"),
    (lambda rt: _bad_rope_append(rt, block_table=CudaArray((8, 16), typestr="<i4", itemsize=4),
                                 k_cache=CudaArray((64, 2, 16, 128)), v_cache=CudaArray((64, 2, 16, 128))),
     "k_cache has shape [64, 2, 16, 128]; expected [num_blocks, 4, block_size, 128] (the paged cache)"),
    (lambda rt: _bad_rope_append(rt, style="llama"), "style='llama'"),
    (lambda rt: _bad_rope_append(rt, **{n: CudaArray(s, typestr="<i4", itemsize=4) for n, s in
                                        (("q", (8, 16, 128)), ("k", (8, 4, 128)), ("v", (8, 4, 128)))}),
     "dtype i32 is not f32, f16 or bf16"),
    (lambda rt: _bad_rope_append(rt, k=CudaArray((8, 4, 128), typestr="<f4", itemsize=4)),
     "k is f32; the other tensors are f16"),
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


def test_paged_decode_attention_passes_the_block_geometry(rt):
    q, o = CudaArray((2, 8, 64)), CudaArray((2, 8, 64))
    k, v = CudaArray((37, 2, 32, 64)), CudaArray((37, 2, 32, 64))
    table = CudaArray((2, 5), typestr="<i4", itemsize=4, ptr=0x7000)
    rt.prepare_decode_attention(q, k, v, o, block_table=table)
    _, args, _ = rt._lib.calls[-1]
    assert (args.block_table, args.block_size, args.max_blocks, args.num_blocks) == (0x7000, 32, 5, 37)
    assert (args.batch, args.heads_kv, args.seq, args.seq_max) == (2, 2, 5 * 32, 0)
    with pytest.raises(ktune.BadInputError, match=r"block_table has shape \[3, 5\]"):
        rt.decode_attention(q, k, v, o, block_table=CudaArray((3, 5), typestr="<i4", itemsize=4))


def test_runtime_without_a_gpu_raises_no_device():
    try:
        r = ktune.Runtime()
    except ktune.NoDeviceError as e:
        assert e.code == 3
        return
    r.close()
    pytest.skip("a GPU is present here: the gpu tests cover the runtime")


class TorchLike:
    """A stand-in torch.Tensor (no torch here): what the runtime reads, and new_empty."""

    class device:  # noqa: N801 - torch's attribute name
        type, index = "cuda", 0

    class _Dtype:
        def __str__(self):
            return "torch.bfloat16"

    is_cuda = True
    dtype = _Dtype()
    made = []

    def __init__(self, shape, ptr=None, strides=None, device=0):
        self.shape = tuple(shape)
        self._ptr = ptr if ptr is not None else 0x7E0000000000 + 0x100000 * len(TorchLike.made)
        self._strides, self._device = strides, device
        if device != 0:
            self.device = type("device", (), {"type": "cuda", "index": device})()
        TorchLike.made.append(self)

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return self._device

    def stride(self):
        if self._strides is not None:
            return tuple(self._strides)
        out, acc = [], 1
        for s in reversed(self.shape):
            out.append(acc)
            acc *= s
        return tuple(reversed(out))

    def new_empty(self, shape, dtype=None):
        assert dtype is None, "allocated like the first tensor"
        return TorchLike(shape)


def test_outputs_left_out_are_allocated_like_the_first_torch_tensor_and_returned(rt):
    a, b = TorchLike((5, 64)), TorchLike((96, 64))
    c = rt.gemm(a, b, stream=0)
    assert isinstance(c, TorchLike) and c.shape == (5, 96)
    op, args, _ = rt._lib.calls[-1]
    assert op == "gemm" and args.c == c.data_ptr() and (args.m, args.n, args.k) == (5, 96, 64)
    given = TorchLike((5, 96))
    assert rt.gemm(a, b, given, stream=0) is given
    x, w = TorchLike((7, 128)), TorchLike((128,))
    y, r_out = rt.rmsnorm(x, w, residual=TorchLike((7, 128)), stream=0)
    assert y.shape == r_out.shape == (7, 128) and y is not r_out
    assert rt.swiglu(x=TorchLike((3, 256)), stream=0).shape == (3, 128)
    o = rt.decode_attention(TorchLike((2, 8, 64)), TorchLike((2, 2, 100, 64)), TorchLike((2, 2, 100, 64)), stream=0)
    assert o.shape == (2, 8, 64)


def test_an_output_left_out_of_a_call_on_other_tensors_is_a_bad_input(rt):
    with pytest.raises(ktune.BadInputError, match="c is required .outputs are allocated only for torch tensors"):
        rt.gemm(CudaArray((5, 64)), CudaArray((96, 64)))
    assert rt._lib.calls == []



def _fields(struct):
    return {name: getattr(struct, name) for name, _ in struct._fields_}


def test_a_repeated_torch_gemm_reuses_its_checked_struct_with_new_pointers(rt):
    a, w, c = TorchLike((3, 896), 0x10000), TorchLike((1152, 896), 0x20000), TorchLike((3, 1152), 0x30000)
    bias = TorchLike((1152,), 0x40000)
    rt.gemm(a, w, c, bias=bias, epilogue="bias", stream=7)  # checked, kept
    a2, c2 = TorchLike((3, 896), 0x50000), TorchLike((3, 1152), 0x60000)
    assert rt.gemm(a2, w, c2, bias=bias, epilogue="bias", stream=7) is c2  # reused
    (_, first, s1), (_, second, s2) = rt._lib.calls
    assert (s1, s2) == (7, 7)
    one, two = _fields(first), _fields(second)
    assert (two["a"], two["b"], two["c"], two["bias"]) == (0x50000, 0x20000, 0x60000, 0x40000)
    for name in ("a", "c"):
        one.pop(name), two.pop(name)
    assert one == two and (one["m"], one["n"], one["k"], one["epilogue"]) == (3, 1152, 896, 1)
    assert len(rt._checked) == 1


def test_a_torch_gemm_of_another_shape_or_a_bad_one_is_checked_again(rt):
    w = TorchLike((256, 512), 0x20000)
    rt.gemm(TorchLike((1, 512), 0x10000), w, TorchLike((1, 256), 0x30000), stream=0)
    with pytest.raises(ktune.BadInputError, match="c has shape"):
        rt.gemm(TorchLike((2, 512), 0x10000), w, TorchLike((1, 256), 0x30000), stream=0)
    with pytest.raises(ktune.BadInputError, match="cuda:1"):
        rt.gemm(TorchLike((1, 512), 0x10000, device=1), TorchLike((256, 512), 0x20000, device=1),
                TorchLike((1, 256), 0x30000, device=1), stream=0)
    rt.gemm(TorchLike((2, 512), 0x10000), w, TorchLike((2, 256), 0x30000), stream=0)
    strided = TorchLike((2, 512), 0x10000, strides=(1024, 1))  # a column slice: rows strided, checked anew
    rt.gemm(strided, w, TorchLike((2, 256), 0x30000), stream=0)
    assert [call[1].lda for call in rt._lib.calls] == [512, 512, 1024]
    assert len(rt._checked) == 3  # the refused calls were not kept


# Each operator's call on torch tensors, as (method, a function of fresh tensors -> (args, kwargs)):
# a repeat with new tensors of the same signature is launched from the kept struct.
_REUSED_CALLS = {
    "rmsnorm": lambda T: ((T((5, 896)), T((896,)), T((5, 896))), {"eps": 1e-5}),
    "rmsnorm+residual": lambda T: ((T((5, 896)), T((896,)), T((5, 896))),
                                   {"residual": T((5, 896)), "residual_out": T((5, 896))}),
    "softmax": lambda T: ((T((4, 1000)), T((4, 1000))), {"scale": 0.5, "mask": "causal"}),
    "swiglu": lambda T: ((), {"x": T((3, 512)), "out": T((3, 256))}),
    "decode_attention": lambda T: ((T((2, 8, 64)), T((2, 2, 100, 64)), T((2, 2, 100, 64)), T((2, 8, 64))),
                                   {"seq": 64, "scale": 0.125}),
    "gemm+bias": lambda T: ((T((3, 896)), T((1152, 896)), T((3, 1152))), {"bias": T((1152,)), "epilogue": "bias"}),
}


@pytest.mark.parametrize("name", sorted(_REUSED_CALLS))
def test_a_repeated_torch_call_of_every_operator_launches_what_a_full_check_would(rt, name):
    """The repeat reuses the kept struct (one signature kept), and its struct equals, field for field,
    the one a runtime that never saw the first call builds by checking the repeat in full."""
    method = name.split("+")[0]
    make = _REUSED_CALLS[name]
    args, kwargs = make(TorchLike)
    getattr(rt, method)(*args, **kwargs, stream=3)
    args2, kwargs2 = make(TorchLike)  # new tensors: new pointers, the same signature
    result = getattr(rt, method)(*args2, **kwargs2, stream=3)
    assert len(rt._checked) == 1 and len(rt._lib.calls) == 2
    fresh = _recording_runtime()
    assert getattr(fresh, method)(*args2, **kwargs2, stream=3) is not None
    (op, reused, s1), = rt._lib.calls[1:]
    (op2, checked, s2), = fresh._lib.calls
    fresh._handle = None
    assert (op, s1) == (op2, s2) == (method, 3)
    assert _fields(reused) == _fields(checked)
    outputs = [t for t in list(args2) + list(kwargs2.values()) if isinstance(t, TorchLike)]
    pointers = {t.data_ptr() for t in outputs}
    assert pointers <= set(_fields(reused).values())  # every tensor of the repeat is in its struct
    assert result is not None


def test_a_repeat_with_another_option_or_a_missing_output_is_checked_in_full(rt):
    x, w = TorchLike((5, 896)), TorchLike((896,))
    rt.rmsnorm(x, w, TorchLike((5, 896)), eps=1e-5, stream=0)
    rt.rmsnorm(x, w, TorchLike((5, 896)), eps=1e-6, stream=0)  # another eps: another signature
    assert len(rt._checked) == 2
    assert [c[1].eps for c in rt._lib.calls] == [pytest.approx(1e-5), pytest.approx(1e-6)]
    y = rt.rmsnorm(x, w, eps=1e-5, stream=0)  # no output given: allocated, checked in full, not kept
    assert isinstance(y, TorchLike) and len(rt._checked) == 2
    with pytest.raises(ktune.BadInputError, match="y has shape"):
        rt.rmsnorm(x, w, TorchLike((4, 896)), eps=1e-5, stream=0)
    assert len(rt._checked) == 2  # refused: not kept


class SoftmaxDoor:
    """A stand-in for the native doors' module (ktune._native.MODULE): records softmax_into's
    arguments and answers with `code` or raises `error`."""

    def __init__(self, code=0, error=None):
        self.code, self.error, self.calls = code, error, []

    def softmax_into(self, *args):
        self.calls.append(args)
        if self.error is not None:
            raise self.error
        return self.code


class OtherLike(TorchLike):
    """Another tensor class: a call mixing it with TorchLike is no torch call."""


def _with_door(monkeypatch, door):
    monkeypatch.setattr(ktune.runtime._native, "runtime_door", lambda t: door if isinstance(t, TorchLike) else None)


def test_softmax_with_its_output_given_takes_the_native_door_with_what_the_runtime_knows(rt, monkeypatch):
    door = SoftmaxDoor()
    _with_door(monkeypatch, door)
    x, y, lengths = TorchLike((4, 1000)), TorchLike((4, 1000)), TorchLike((4,))
    assert rt.softmax(x, y, scale=0.5, mask="padding", lengths=lengths) is y
    assert rt.softmax(x, y, mask="causal", stream=9) is y
    assert door.calls == [(1, 0, x, y, 0.5, 2, lengths, None), (1, 0, x, y, 1.0, 1, None, 9)]
    assert rt._lib.calls == []  # nothing went through ctypes
    rt.softmax(x, y, workspace=CudaArray((256,), "|u1", itemsize=1), stream=0)  # a workspace: the ctypes path
    rt.softmax(x, OtherLike((4, 1000)), stream=0)  # an output of another class: the ctypes path
    assert len(door.calls) == 2 and [c[0] for c in rt._lib.calls] == ["softmax", "softmax"]
    with pytest.raises(ktune.BadInputError, match="mask='sideways'"):  # refused by the ctypes path's check
        rt.softmax(x, y, mask="sideways")
    rt._handle = None
    rt.softmax(x, y)  # a closed runtime reaches the door as handle 0, which refuses it
    assert door.calls[-1][0] == 0


def test_the_native_doors_errors_are_the_runtimes(rt, monkeypatch):
    x, y = TorchLike((4, 1000)), TorchLike((4, 1000))
    _with_door(monkeypatch, SoftmaxDoor(error=ValueError("softmax: y has shape [4, 999]; expected [4, 1000]")))
    with pytest.raises(ktune.BadInputError, match=r"y has shape \[4, 999\]"):
        rt.softmax(x, y)
    _with_door(monkeypatch, SoftmaxDoor(code=4))  # KTUNE_ERR_NOT_FOUND: on_miss="error" found no config
    with pytest.raises(ktune.NotFoundError):
        rt.softmax(x, y)


def test_only_a_plain_torch_tensor_takes_the_native_doors():
    from ktune import _native
    assert _native.runtime_door(TorchLike((2, 8))) is None
    assert _native.runtime_door(CudaArray((2, 8))) is None
