"""ktune.Runtime: launch the tuned kernels on tensors of any framework (libktune_runtime.so).

Every operator takes its tensors (torch tensors, or anything with __cuda_array_interface__ or
__dlpack__), reads their shapes, strides and dtypes, checks them against each other and raises
BadInputError (a ValueError) before anything is launched. Outputs are written in place: the
caller allocates them, or passes None for an output of a call on torch tensors, which then
allocates it; a launch returns its outputs. `stream` is None (for torch tensors torch's current
stream of their device, otherwise the legacy default stream), an int handle, a
torch.cuda.Stream or an object with __cuda_stream__. prepare_<op>(...) takes the same arguments,
launches nothing and returns how the key is served (PlanInfo): call it before CUDA-graph capture.
"""

import ctypes as C
import operator
from dataclasses import dataclass

from . import _abi, _native
from .errors import BadInputError
from ._call import _Op, _choice, _torch_bf16, _torch_current_stream
from ._reuse import CheckedCalls
from .tensors import ELEMENT_BYTES, dtype_name, stream_handle, view

_EPILOGUES = {None: 0, "none": 0, "bias": 1, "silu": 2, "bias+silu": 3}
_MASKS = {None: 0, "none": 0, "causal": 1, "padding": 2}
_STYLES = {"neox": 0, "gptj": 1}
_SCALINGS = {"tensor": 0, "rowcol": 1}
# The args struct's pointer field of each tensor argument, in the order the operators pass them.
_RMSNORM_ROPE_FIELDS = ("q", "k", "q_weight", "k_weight", "cos_sin", "positions", "q_out", "k_out")
_ROPE_APPEND_FIELDS = ("q", "k", "v", "cos_sin", "positions", "k_cache", "v_cache", "q_out", "q_weight", "k_weight",
                       "block_table")


# Called with a Runtime just before it frees its handle (ktune.torch unbinds it from its native kernels).
_ON_CLOSE = []


@dataclass(frozen=True)
class PlanInfo:
    source: str  # "tuned", "nearest" or "default"
    config_name: str
    tuned_shape: str
    tuned_median_us: float
    launches: int
    workspace_bytes: int


def _plan_info(raw):
    return PlanInfo(_abi.SOURCES.get(raw.source, "?"), raw.config_name.decode(), raw.tuned_shape.decode(),
                    raw.tuned_median_us, raw.launches, raw.workspace_bytes)


class Runtime:
    """The tuned kernels of one GPU. db None: $KTUNE_DB, else ~/.cache/ktune/ktune.db (a missing
    file is no error: every key is then a miss). on_miss: "nearest" (the nearest tuned shape's
    config, else the default), "default", or "error" (NotFoundError naming the `ktune tune`
    command that fills the key). record_misses: a file to which every key served from a nearest
    tuned shape or a default config is appended (for `ktune tune --shapes FILE`; default
    $KTUNE_RECORD_MISSES). One Runtime serves any number of threads and streams."""

    def __init__(self, db=None, device=0, on_miss="nearest", compile_on_miss=True, record_misses=None):
        self._lib = _abi.runtime_lib()
        self._launchers, self._templates = {}, {}  # op -> its C launch function; op -> default args
        self._checked = CheckedCalls()  # a torch call's signature -> its checked args struct
        if not isinstance(device, int) or device < 0:
            raise BadInputError(f"device={device!r} must be a CUDA device ordinal (an int >= 0)")
        options = _abi.RuntimeOptions()
        self._lib.ktune_runtime_options_init(C.byref(options))
        options.db_path = None if db is None else str(db).encode()
        options.device = device
        options.on_miss = _choice(_abi.MISS, on_miss, "on_miss")
        options.compile_on_miss = 1 if compile_on_miss else 0
        handle = C.c_void_p()
        self._check(self._lib.ktune_runtime_create(C.byref(options), C.byref(handle)))
        self._handle = handle
        self.device = device
        if record_misses is not None:
            self.record_misses(record_misses)

    def record_misses(self, path):
        """Records from now on every key prepared without a tuned config into `path` (one
        `KERNEL SHAPE DTYPE [LAYOUT]` line a key, for `ktune tune --shapes`); None or "" stops."""
        self._check(self._lib.ktune_runtime_record_misses(self._live(), None if not path else str(path).encode()))

    def close(self):
        """Frees the runtime's modules and workspaces (no launch may be running or replayed after)."""
        if getattr(self, "_handle", None):
            for hook in _ON_CLOSE:  # e.g. ktune.torch's native kernels forget the handle
                try:
                    hook(self)
                except Exception:  # noqa: BLE001 - at interpreter exit the hook's modules may be gone
                    pass
            self._lib.ktune_runtime_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def gpu_name(self):
        return self._lib.ktune_runtime_gpu_name(self._live()).decode()

    @property
    def tuned_keys(self):
        return int(self._lib.ktune_runtime_tuned_keys(self._live()))

    @property
    def prepared_plans(self):
        return int(self._lib.ktune_runtime_prepared_plans(self._live()))

    # ---- plumbing

    def _live(self):
        if not getattr(self, "_handle", None):
            raise BadInputError("the runtime is closed")
        return self._handle

    def _check(self, code):
        _abi.check(code, self._lib, "ktune_runtime_last_error")

    def _call(self, op, args, stream, prepare, call=None, keep=None):
        """Prepares (PlanInfo) or launches op; a launch returns the call's outputs (call.result). keep:
        the call's signature, under which its checked struct is kept for the next such call."""
        if keep is not None:
            self._checked.keep(keep, args)
        if prepare:
            info = _abi.PlanInfo()
            self._check(getattr(self._lib, f"ktune_runtime_prepare_{op}")(self._live(), C.byref(args), C.byref(info)))
            return _plan_info(info)
        self._launch(op, args, call.stream(stream) if call is not None else stream_handle(stream))
        return None if call is None else call.result

    def _launch(self, op, args, stream):
        """Launches op with a filled args struct on stream (a CUstream handle or None)."""
        launch = self._launchers.get(op)
        if launch is None:
            launch = self._launchers[op] = getattr(self._lib, f"ktune_runtime_{op}")
        handle = self._handle
        if not handle:
            raise BadInputError("the runtime is closed")
        code = launch(handle, C.byref(args), stream)
        if code:
            self._check(code)

    def _reused(self, op, fields, tensors, options, stream):
        """(signature, launched): a call on torch tensors whose signature was checked before is launched
        from the kept struct with its new pointers (launched True); otherwise the signature under
        which the full check keeps it (None when the call cannot be reused)."""
        sig = self._checked.signature(op, tensors, options)
        if sig is None:
            return None, False
        args = self._checked.struct(sig, fields, tensors)
        if args is None:
            return sig, False
        self._launch(op, args, _torch_current_stream(self.device) if stream is None else stream_handle(stream))
        return sig, True

    def _args(self, op):
        """A fresh args struct of `op` holding the library's defaults (its _init, read once)."""
        template = self._templates.get(op)
        if template is None:
            template = _abi.OPS[op]()
            getattr(self._lib, f"ktune_{op}_args_init")(C.byref(template))
            self._templates[op] = template
        return type(template).from_buffer_copy(template)

    @staticmethod
    def _workspace(args, workspace, op):
        if workspace is None:
            return
        v = view(workspace, f"{op}: workspace")
        args.workspace = v.ptr
        size = ELEMENT_BYTES[v.dtype]
        for s in v.shape:
            size *= s
        args.workspace_bytes = size

    # ---- the operators (see include/ktune/ktune.hpp for each one's semantics)

    def _gemm(self, a, b, c, bias, layout, epilogue, workspace, stream, prepare, keep=None):
        o = _Op(self.device, "gemm")
        va = o.tensor(a, "a", 2, "same", contiguous=False)
        vb = o.tensor(b, "b", 2, "same", contiguous=False)
        nt = _choice({"nt": True, "nn": False}, layout, "layout")
        m, k = va.shape
        n = vb.shape[0] if nt else vb.shape[1]
        o.shape(vb, "b", (n, k) if nt else (k, n), "gemm")
        if c is None:
            o.result, vc = o.output(None, "c", (m, n))
        else:
            o.result, vc = c, o.tensor(c, "c", 2, "same", contiguous=False)
            o.shape(vc, "c", (m, n), "gemm")
        args = self._args("gemm")
        args.a, args.b, args.c = va.ptr, vb.ptr, vc.ptr
        args.m, args.n, args.k = m, n, k
        args.lda, args.ldb, args.ldc = o.rows(va, "a"), o.rows(vb, "b"), o.rows(vc, "c")
        args.dtype = _abi.DTYPES[o.dtype] if o.dtype in ("f32", "f16", "bf16") else -1
        if args.dtype < 0:
            raise BadInputError(f"gemm: dtype {o.dtype} is not f32, f16 or bf16 (fp8 has fp8_gemm)")
        args.layout = 0 if nt else 1
        args.epilogue = _choice(_EPILOGUES, epilogue, "epilogue")
        if args.epilogue in (1, 3):
            vbias = o.tensor(bias, "bias", 1, "same")
            o.shape(vbias, "bias", (n,), "gemm")
            args.bias = vbias.ptr
        elif bias is not None:
            raise BadInputError("gemm: bias given without a bias epilogue ('bias' or 'bias+silu')")
        self._workspace(args, workspace, "gemm")
        return self._call("gemm", args, stream, prepare, o, keep)

    def gemm(self, a, b, c=None, bias=None, layout="nt", epilogue=None, workspace=None, stream=None):
        """c[m,n] = epilogue(a[m,k] @ b^T) with b [n,k] ("nt", the nn.Linear weight) or a @ b with b
        [k,n] ("nn"). Rows may be strided (views of a fused projection); epilogue None, "bias",
        "silu" or "bias+silu" (bias [n])."""
        sig = None
        if c is not None and workspace is None:
            sig, launched = self._reused("gemm", ("a", "b", "c", "bias"), (a, b, c, bias), (layout, epilogue), stream)
            if launched:
                return c
        return self._gemm(a, b, c, bias, layout, epilogue, workspace, stream, False, sig)

    def prepare_gemm(self, a, b, c=None, bias=None, layout="nt", epilogue=None, workspace=None):
        return self._gemm(a, b, c, bias, layout, epilogue, workspace, None, True)

    def _rmsnorm(self, x, w, y, residual, residual_out, eps, stream, prepare, keep=None):
        o = _Op(self.device, "rmsnorm")
        vx = o.tensor(x, "x", 2, "same")
        rows, hidden = vx.shape
        vw = o.tensor(w, "w", 1, "same")
        o.shape(vw, "w", (hidden,), "rmsnorm")
        y, vy = o.output(y, "y", (rows, hidden))
        o.result = y
        args = self._args("rmsnorm")
        args.x, args.w, args.y = vx.ptr, vw.ptr, vy.ptr
        if residual is not None:
            vr = o.tensor(residual, "residual", 2, "same")
            o.shape(vr, "residual", (rows, hidden), "rmsnorm")
            residual_out, vro = o.output(residual_out, "residual_out", (rows, hidden))
            o.result = (y, residual_out)
            args.residual, args.residual_out = vr.ptr, vro.ptr
        elif residual_out is not None:
            raise BadInputError("rmsnorm: residual_out given without residual")
        args.rows, args.hidden, args.eps = rows, hidden, eps
        args.dtype = _abi.DTYPES[o.dtype]
        return self._call("rmsnorm", args, stream, prepare, o, keep)

    def rmsnorm(self, x, w, y=None, residual=None, residual_out=None, eps=1e-6, stream=None):
        """y = x / sqrt(mean(x^2) + eps) * w per row of x [rows, hidden]; with residual: s = x +
        residual goes to residual_out (may be residual) and y = rmsnorm(s) * w. Returns y, or
        (y, residual_out) with a residual (allocated when None, for torch tensors)."""
        sig = None
        if y is not None and (residual is None or residual_out is not None):
            sig, launched = self._reused("rmsnorm", ("x", "w", "y", "residual", "residual_out"),
                                         (x, w, y, residual, residual_out), (eps,), stream)
            if launched:
                return y if residual is None else (y, residual_out)
        return self._rmsnorm(x, w, y, residual, residual_out, eps, stream, False, sig)

    def prepare_rmsnorm(self, x, w, y=None, residual=None, residual_out=None, eps=1e-6):
        return self._rmsnorm(x, w, y, residual, residual_out, eps, None, True)

    def _rmsnorm_rope(self, q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out, eps, style, stream,
                      prepare, keep=None):
        o = _Op(self.device, "rmsnorm_rope")
        vq = o.tensor(q, "q", 3, "same")
        tokens, hq, d = vq.shape
        vk = o.tensor(k, "k", 3, "same")
        if vk.shape[0] != tokens or vk.shape[2] != d:
            raise BadInputError(f"rmsnorm_rope: k has shape {list(vk.shape)}; expected [{tokens}, heads_kv, {d}]")
        hk = vk.shape[1]
        vqw = o.tensor(q_weight, "q_weight", 1, "same")
        vkw = o.tensor(k_weight, "k_weight", 1, "same")
        o.shape(vqw, "q_weight", (d,), "rmsnorm_rope")
        o.shape(vkw, "k_weight", (d,), "rmsnorm_rope")
        vcs = o.tensor(cos_sin, "cos_sin", 2, "f32")
        if vcs.shape[1] != d:
            raise BadInputError(f"rmsnorm_rope: cos_sin has shape {list(vcs.shape)}; expected [max_pos, {d}]")
        vp = o.tensor(positions, "positions", 1, "i32")
        o.shape(vp, "positions", (tokens,), "rmsnorm_rope")
        q_out, vqo = o.output(q_out, "q_out", vq.shape)
        k_out, vko = o.output(k_out, "k_out", vk.shape)
        o.result = (q_out, k_out)
        args = self._args("rmsnorm_rope")
        args.q, args.k, args.q_weight, args.k_weight = vq.ptr, vk.ptr, vqw.ptr, vkw.ptr
        args.cos_sin, args.positions, args.q_out, args.k_out = vcs.ptr, vp.ptr, vqo.ptr, vko.ptr
        args.tokens, args.heads_q, args.heads_kv, args.head_dim, args.max_pos = tokens, hq, hk, d, vcs.shape[0]
        args.eps = eps
        args.style = _choice(_STYLES, style, "style")
        args.dtype = _abi.DTYPES[o.dtype]
        return self._call("rmsnorm_rope", args, stream, prepare, o, keep)

    def rmsnorm_rope(self, q, k, q_weight, k_weight, cos_sin, positions, q_out=None, k_out=None, eps=1e-6,
                     style="neox", stream=None):
        """Per-head RMSNorm of q [tokens, heads_q, d] and k [tokens, heads_kv, d] with the rotary
        embedding at positions (int32 [tokens]) from cos_sin (f32 [max_pos, d]: cos then sin).
        Returns (q_out, k_out)."""
        sig = None
        if q_out is not None and k_out is not None:
            sig, launched = self._reused("rmsnorm_rope", _RMSNORM_ROPE_FIELDS,
                                         (q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out), (eps, style),
                                         stream)
            if launched:
                return q_out, k_out
        return self._rmsnorm_rope(q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out, eps, style, stream,
                                  False, sig)

    def prepare_rmsnorm_rope(self, q, k, q_weight, k_weight, cos_sin, positions, q_out=None, k_out=None,
                             eps=1e-6, style="neox"):
        return self._rmsnorm_rope(q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out, eps, style, None,
                                  True)

    def _rope_append(self, q, k, v, cos_sin, positions, k_cache, v_cache, q_out, q_weight, k_weight, block_table,
                     seq_tokens, eps, style, stream, prepare, keep=None):
        op = "rope_append"
        o = _Op(self.device, op)
        vq = o.tensor(q, "q", 3, "same")
        tokens, hq, d = vq.shape
        vk = o.tensor(k, "k", 3, "same")
        if vk.shape[0] != tokens or vk.shape[2] != d:
            raise BadInputError(f"{op}: k has shape {list(vk.shape)}; expected [{tokens}, heads_kv, {d}]")
        hk = vk.shape[1]
        vv = o.tensor(v, "v", 3, "same")
        o.shape(vv, "v", vk.shape, op)
        vqo = vq if q_out is None else o.tensor(q_out, "q_out", 3, "same")
        o.shape(vqo, "q_out", vq.shape, op)
        o.result = q if q_out is None else q_out
        if o.dtype not in ("f32", "f16", "bf16"):
            raise BadInputError(f"{op}: dtype {o.dtype} is not f32, f16 or bf16")
        if (q_weight is None) != (k_weight is None):
            raise BadInputError(f"{op}: give both q_weight and k_weight (the RMSNorm form) or neither")
        vcs = o.tensor(cos_sin, "cos_sin", 2, "f32")
        rot = vcs.shape[1]
        if not 0 < rot <= d or vcs.shape[0] == 0:
            raise BadInputError(f"{op}: cos_sin has shape {list(vcs.shape)}; expected [max_pos, rot_dim] with "
                                f"0 < rot_dim <= head_dim {d}")
        vp = o.tensor(positions, "positions", 1, "i32")
        o.shape(vp, "positions", (tokens,), op)
        args = self._args(op)
        self._rope_append_cache(o, args, k_cache, v_cache, block_table, vk.shape, seq_tokens)
        if q_weight is not None:
            vqw = o.tensor(q_weight, "q_weight", 1, "same")
            vkw = o.tensor(k_weight, "k_weight", 1, "same")
            o.shape(vqw, "q_weight", (d,), op)
            o.shape(vkw, "k_weight", (d,), op)
            args.q_weight, args.k_weight = vqw.ptr, vkw.ptr
        args.q, args.k, args.v, args.cos_sin, args.positions = vq.ptr, vk.ptr, vv.ptr, vcs.ptr, vp.ptr
        args.q_out = vqo.ptr
        args.tokens, args.heads_q, args.heads_kv, args.head_dim, args.rot_dim = tokens, hq, hk, d, rot
        args.max_pos = vcs.shape[0]
        args.eps = eps
        args.style = _choice(_STYLES, style, "style")
        args.dtype = _abi.DTYPES[o.dtype]
        return self._call(op, args, stream, prepare, o, keep)

    @staticmethod
    def _rope_append_cache(o, args, k_cache, v_cache, block_table, kv_shape, seq_tokens):
        """The cache geometry of rope_append (contiguous, or paged with block_table) into args."""
        op = o.op
        tokens, hk, d = kv_shape
        try:
            count = operator.index(seq_tokens)
        except TypeError:
            count = 0
        if count < 1:
            raise BadInputError(f"{op}: seq_tokens={seq_tokens!r} must be an int >= 1 (the tokens of a sequence)")
        seq_tokens = count
        sequences = -(-tokens // seq_tokens)
        of = f"({tokens} tokens, {seq_tokens} a sequence)"
        vkc = o.tensor(k_cache, "k_cache", 4, "same")
        if block_table is None:
            if vkc.shape[0] < sequences or vkc.shape[1] != hk or vkc.shape[3] != d:
                raise BadInputError(f"{op}: k_cache has shape {list(vkc.shape)}; expected [sequences >= {sequences}, "
                                    f"{hk}, seq_max, {d}] {of}")
        else:
            vbt = o.tensor(block_table, "block_table", 2, "i32")
            if vbt.shape[0] < sequences:
                raise BadInputError(f"{op}: block_table has shape {list(vbt.shape)}; expected [sequences >= "
                                    f"{sequences}, max_blocks] {of}")
            if vkc.shape[1] != hk or vkc.shape[3] != d:
                raise BadInputError(f"{op}: k_cache has shape {list(vkc.shape)}; expected [num_blocks, {hk}, "
                                    f"block_size, {d}] (the paged cache)")
            args.block_table, args.max_blocks, args.num_blocks = vbt.ptr, vbt.shape[1], vkc.shape[0]
        vvc = o.tensor(v_cache, "v_cache", 4, "same")
        o.shape(vvc, "v_cache", vkc.shape, op)
        args.k_cache, args.v_cache = vkc.ptr, vvc.ptr
        args.seq_tokens, args.cache_rows = seq_tokens, vkc.shape[2]

    def rope_append(self, q, k, v, cos_sin, positions, k_cache, v_cache, q_out=None, q_weight=None, k_weight=None,
                    block_table=None, seq_tokens=1, eps=1e-6, style="neox", stream=None):
        """The rotary embedding of q [tokens, heads_q, d] into q_out (None: q itself, in place) and
        of k [tokens, heads_kv, d] into k_cache, with v copied into v_cache, at positions (int32
        [tokens]) from cos_sin (f32 [max_pos, rot_dim]: cos then sin; rot_dim < d rotates the
        first rot_dim elements of a head). q_weight and k_weight [d]: a per-head RMSNorm first
        (Qwen3). Token t is of sequence t // seq_tokens (decode: 1). Caches [sequences, heads_kv,
        seq_max, d], row position % seq_max; with block_table (int32 [sequences, max_blocks]) the
        paged caches [num_blocks, heads_kv, block_size, d], block block_table[s, position //
        block_size % max_blocks] (one outside [0, num_blocks) is not written), row position %
        block_size."""
        sig = None
        if q_out is not None:
            sig, launched = self._reused("rope_append", _ROPE_APPEND_FIELDS,
                                         (q, k, v, cos_sin, positions, k_cache, v_cache, q_out, q_weight, k_weight,
                                          block_table), (seq_tokens, eps, style), stream)
            if launched:
                return q_out
        return self._rope_append(q, k, v, cos_sin, positions, k_cache, v_cache, q_out, q_weight, k_weight,
                                 block_table, seq_tokens, eps, style, stream, False, sig)

    def prepare_rope_append(self, q, k, v, cos_sin, positions, k_cache, v_cache, q_out=None, q_weight=None,
                            k_weight=None, block_table=None, seq_tokens=1, eps=1e-6, style="neox"):
        return self._rope_append(q, k, v, cos_sin, positions, k_cache, v_cache, q_out, q_weight, k_weight,
                                 block_table, seq_tokens, eps, style, None, True)

    def _softmax(self, x, y, scale, mask, lengths, workspace, stream, prepare, keep=None):
        o = _Op(self.device, "softmax")
        vx = o.tensor(x, "x", 2, "same")
        o.result, vy = o.output(y, "y", vx.shape)
        args = self._args("softmax")
        args.x, args.y = vx.ptr, vy.ptr
        args.rows, args.cols = vx.shape
        args.scale = scale
        args.mask = _choice(_MASKS, mask, "mask")
        if args.mask == 2:
            vl = o.tensor(lengths, "lengths", 1, "i32")
            o.shape(vl, "lengths", (vx.shape[0],), "softmax")
            args.lengths = vl.ptr
        args.dtype = _abi.DTYPES[o.dtype]
        self._workspace(args, workspace, "softmax")
        return self._call("softmax", args, stream, prepare, o, keep)

    def softmax(self, x, y=None, scale=1.0, mask=None, lengths=None, workspace=None, stream=None):
        """y = softmax(scale * x) per row; mask None, "causal" or "padding" (lengths int32 [rows])."""
        sig = None
        if y is not None and workspace is None:
            door = _native.runtime_door(x)
            if door is not None and type(y) is type(x) and (lengths is None or type(lengths) is type(x)) \
                    and mask in _MASKS:
                return self._softmax_native(door, x, y, scale, mask, lengths, stream)
            sig, launched = self._reused("softmax", ("x", "y", "lengths"), (x, y, lengths), (scale, mask), stream)
            if launched:
                return y
        return self._softmax(x, y, scale, mask, lengths, workspace, stream, False, sig)

    def _softmax_native(self, door, x, y, scale, mask, lengths, stream):
        """softmax through the native door (ktune._native.runtime_door): the same checks and launch
        as the ctypes path, in one C++ call."""
        handle = self._handle
        try:
            code = door.softmax_into(handle.value if handle else 0, self.device, x, y, scale, _MASKS[mask], lengths,
                                     None if stream is None else (stream_handle(stream) or 0))
        except ValueError as e:
            raise BadInputError(str(e)) from None
        if code:
            self._check(code)
        return y

    def prepare_softmax(self, x, y=None, scale=1.0, mask=None, lengths=None, workspace=None):
        return self._softmax(x, y, scale, mask, lengths, workspace, None, True)

    def _swiglu(self, x, out, gate, up, stream, prepare, keep=None):
        o = _Op(self.device, "swiglu")
        args = self._args("swiglu")
        if x is not None:
            if gate is not None or up is not None:
                raise BadInputError("swiglu: give x (fused) or gate and up (split), not both")
            vx = o.tensor(x, "x", 2, "same")
            if vx.shape[1] % 2:
                raise BadInputError(f"swiglu: x has shape {list(vx.shape)}; its columns (gate then up) must be even")
            m, i = vx.shape[0], vx.shape[1] // 2
            args.x = vx.ptr
        else:
            vg = o.tensor(gate, "gate", 2, "same")
            m, i = vg.shape
            vu = o.tensor(up, "up", 2, "same")
            o.shape(vu, "up", (m, i), "swiglu")
            args.gate, args.up = vg.ptr, vu.ptr
        o.result, vout = o.output(out, "out", (m, i))
        args.out, args.m, args.i = vout.ptr, m, i
        args.dtype = _abi.DTYPES[o.dtype]
        return self._call("swiglu", args, stream, prepare, o, keep)

    def swiglu(self, x=None, out=None, gate=None, up=None, stream=None):
        """out[m, i] = silu(gate) * up, from x [m, 2i] (gate then up) or from gate and up [m, i]."""
        sig = None
        if out is not None:
            sig, launched = self._reused("swiglu", ("x", "out", "gate", "up"), (x, out, gate, up), (), stream)
            if launched:
                return out
        return self._swiglu(x, out, gate, up, stream, False, sig)

    def prepare_swiglu(self, x=None, out=None, gate=None, up=None):
        return self._swiglu(x, out, gate, up, None, True)

    def _decode_attention(self, q, k_cache, v_cache, o_, context_lens, seq, scale, workspace, block_table, stream,
                          prepare, keep=None):
        o = _Op(self.device, "decode_attention")
        vq = o.tensor(q, "q", 3, "same")
        batch, hq, d = vq.shape
        vk = o.tensor(k_cache, "k_cache", 4, "same")
        vv = o.tensor(v_cache, "v_cache", 4, "same")
        paged = block_table is not None
        if (not paged and vk.shape[0] != batch) or vk.shape[3] != d:
            expected = "[num_blocks, heads_kv, block_size, " if paged else f"[{batch}, heads_kv, seq_max, "
            raise BadInputError(f"decode_attention: k_cache has shape {list(vk.shape)}; expected {expected}{d}]")
        o.shape(vv, "v_cache", vk.shape, "decode_attention")
        o.result, vo = o.output(o_, "o", vq.shape)
        args = self._args("decode_attention")
        args.q, args.k, args.v, args.o = vq.ptr, vk.ptr, vv.ptr, vo.ptr
        if context_lens is not None:
            vl = o.tensor(context_lens, "context_lens", 1, "i32")
            o.shape(vl, "context_lens", (batch,), "decode_attention")
            args.context_lens = vl.ptr
        if paged:
            vbt = o.tensor(block_table, "block_table", 2, "i32")
            if vbt.shape[0] != batch:
                raise BadInputError(f"decode_attention: block_table has shape {list(vbt.shape)}; expected "
                                    f"[{batch}, max_blocks]")
            args.block_table, args.max_blocks, args.num_blocks = vbt.ptr, vbt.shape[1], vk.shape[0]
            args.block_size = vk.shape[2]
            capacity, args.seq_max = vbt.shape[1] * vk.shape[2], 0
        else:
            capacity = args.seq_max = vk.shape[2]
        args.batch, args.heads_q, args.heads_kv, args.head_dim = batch, hq, vk.shape[1], d
        args.seq = capacity if seq is None else seq
        args.scale = scale
        args.dtype = _abi.DTYPES[o.dtype]
        self._workspace(args, workspace, "decode_attention")
        return self._call("decode_attention", args, stream, prepare, o, keep)

    def decode_attention(self, q, k_cache, v_cache, o=None, context_lens=None, seq=None, scale=0.0, workspace=None,
                         block_table=None, stream=None):
        """o[b, h, :] = attention of q[b, h, :] over k_cache, v_cache [batch, heads_kv, seq_max, d].
        A decode loop passes context_lens (int32 [batch], the growing lengths) and leaves seq None
        (= seq_max): one plan and one captured graph serve every step.
        Paged: block_table (int32 [batch, max_blocks]) names the block of each block_size keys, and
        the caches are [num_blocks, heads_kv, block_size, d] (block_size a multiple of 16); seq None
        is max_blocks * block_size."""
        sig = None
        if o is not None and workspace is None:
            sig, launched = self._reused("decode_attention", ("q", "k", "v", "o", "context_lens", "block_table"),
                                         (q, k_cache, v_cache, o, context_lens, block_table), (seq, scale), stream)
            if launched:
                return o
        return self._decode_attention(q, k_cache, v_cache, o, context_lens, seq, scale, workspace, block_table,
                                      stream, False, sig)

    def prepare_decode_attention(self, q, k_cache, v_cache, o=None, context_lens=None, seq=None, scale=0.0,
                                 workspace=None, block_table=None):
        return self._decode_attention(q, k_cache, v_cache, o, context_lens, seq, scale, workspace, block_table,
                                      None, True)

    def _fp8_gemm(self, a, b, a_scale, b_scale, c, workspace, stream, prepare, keep=None):
        o = _Op(self.device, "fp8_gemm")
        va = o.tensor(a, "a", 2)
        vb = o.tensor(b, "b", 2)
        for v, name in ((va, "a"), (vb, "b")):
            if v.dtype not in ("fp8e4m3", "u8"):
                raise BadInputError(f"fp8_gemm: {name} is {v.dtype}; it must be float8_e4m3fn (or its bytes as uint8)")
        m, k = va.shape
        n = vb.shape[0]
        o.shape(vb, "b", (n, k), "fp8_gemm")
        o.result, vc = o.output(c, "c", (m, n), "bf16", _torch_bf16)
        vsa = o.tensor(a_scale, "a_scale", 1, "f32")
        vsb = o.tensor(b_scale, "b_scale", 1, "f32")
        rowcol = vsa.shape[0] != 1 or vsb.shape[0] != 1 or (m == 1 and n == 1)
        if rowcol and (vsa.shape[0], vsb.shape[0]) != (m, n):
            raise BadInputError(f"fp8_gemm: scales of {vsa.shape[0]} and {vsb.shape[0]} values: give 1 and 1 "
                                f"(per tensor) or {m} and {n} (per row and column)")
        args = self._args("fp8_gemm")
        args.a, args.b, args.a_scale, args.b_scale, args.c = va.ptr, vb.ptr, vsa.ptr, vsb.ptr, vc.ptr
        args.m, args.n, args.k = m, n, k
        args.scaling = 1 if rowcol and not (m == 1 and n == 1) else 0
        self._workspace(args, workspace, "fp8_gemm")
        return self._call("fp8_gemm", args, stream, prepare, o, keep)

    def fp8_gemm(self, a, b, a_scale, b_scale, c=None, workspace=None, stream=None):
        """c[m,n] (bf16) = (a[m,k] @ b[n,k]^T) * scales, a and b e4m3; a_scale, b_scale f32 of one
        value each (per tensor) or [m] and [n] (per row of a, per column of c)."""
        sig = None
        if c is not None and workspace is None:
            sig, launched = self._reused("fp8_gemm", ("a", "b", "a_scale", "b_scale", "c"), (a, b, a_scale, b_scale, c),
                                         (), stream)
            if launched:
                return c
        return self._fp8_gemm(a, b, a_scale, b_scale, c, workspace, stream, False, sig)

    def prepare_fp8_gemm(self, a, b, a_scale, b_scale, c=None, workspace=None):
        return self._fp8_gemm(a, b, a_scale, b_scale, c, workspace, None, True)

    # ---- user kernels (docs/byo.md)

    @staticmethod
    def _shape_text(dims):
        if not dims:
            raise BadInputError("a user kernel needs its dimensions, e.g. {'rows': 4096, 'cols': 4096}")
        return ",".join(f"{name}={int(value)}" for name, value in dims.items())

    def launch(self, kernel, dims, dtype, buffers, stream=None):
        """Launches user kernel `kernel` (loaded from $KTUNE_KERNEL_DIR) at its tuned config for
        `dims` (a dict of its dimensions) and `dtype` ("bf16", ...): `buffers` are the tensors (or
        device addresses as ints) of its input and output arguments, in its description's order."""
        ptrs = [b if isinstance(b, int) else view(b, f"{kernel}: buffer {i}").ptr for i, b in enumerate(buffers)]
        array = (C.c_void_p * len(ptrs))(*ptrs)
        self._check(self._lib.ktune_runtime_launch(self._live(), kernel.encode(), self._shape_text(dims).encode(),
                                                   dtype_name(dtype).encode(), array, len(ptrs),
                                                   stream_handle(stream)))

    def prepare_kernel(self, kernel, dims, dtype):
        """How user kernel `kernel` is served for `dims` and `dtype`: (PlanInfo, verified), verified
        False when its description says verify = false."""
        info = _abi.PlanInfo()
        verified = C.c_int(1)
        self._check(self._lib.ktune_runtime_prepare_kernel(self._live(), kernel.encode(),
                                                           self._shape_text(dims).encode(), dtype_name(dtype).encode(),
                                                           C.byref(info), C.byref(verified)))
        return _plan_info(info), bool(verified.value)
