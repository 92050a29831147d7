"""ktune.torch on a GPU: every operator against a float64 torch reference at odd sizes, eagerly,
replayed from a torch.cuda.graph capture, and under torch.compile(fullgraph=True). Skips with the
reason without torch or a CUDA device. Runs under pytest, or alone: `python3 test_torch_ops_gpu.py`
(prints one line a test and exits non-zero when one fails)."""

import math
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

try:
    import torch
    _WHY = None if torch.cuda.is_available() else "torch sees no CUDA device"
except ImportError:
    torch = None
    _WHY = "torch is not installed"

try:
    import pytest
    pytestmark = pytest.mark.skipif(_WHY is not None, reason=_WHY or "")
except ImportError:
    pytest = None

_runtime = None


def _ops():
    """ktune.torch with a runtime on an empty database (every key served by its default config)."""
    global _runtime
    import ktune
    import ktune.torch as kt
    if _runtime is None:
        _runtime = ktune.Runtime(db=os.path.join(tempfile.mkdtemp(), "none.db"))
        kt.use_runtime(_runtime)
    return torch.ops.ktune


def _rand(*shape, dtype=None, lo=0.25, hi=2.0, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    mag = torch.rand(*shape, generator=g, device="cuda", dtype=torch.float64) * (hi - lo) + lo
    sign = torch.where(torch.rand(*shape, generator=g, device="cuda") < 0.5, -1.0, 1.0).double()
    return (mag * sign).to(dtype or torch.bfloat16)


def _error(got, ref):
    """max |got - ref| / (|ref| + mean |ref|), as the C++ gpu tests measure."""
    got, ref = got.double(), ref.double()
    e = ((got - ref).abs() / (ref.abs() + ref.abs().mean())).max().item()
    return math.inf if math.isnan(e) else e


TOL = {torch.float32: 1e-4, torch.float16: 2e-3, torch.bfloat16: 1e-2} if torch else {}


def _rms_ref(x, w, eps):
    x = x.double()
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w.double()


def test_gemm_and_epilogues():
    ops = _ops()
    for dtype in (torch.bfloat16, torch.float16):
        a, w, bias = _rand(37, 515, dtype=dtype, hi=1.0, seed=1), _rand(301, 515, dtype=dtype, hi=1.0, seed=2), \
            _rand(301, dtype=dtype, seed=3)
        prod = a.double() @ w.double().T
        assert _error(ops.gemm(a, w, None, "nt", "none"), prod) <= TOL[dtype]
        assert _error(ops.gemm(a, w.T.contiguous(), None, "nn", "none"), prod) <= TOL[dtype]
        x = prod + bias.double()
        assert _error(ops.gemm(a, w, bias, "nt", "bias+silu"), x / (1 + torch.exp(-x))) <= TOL[dtype]


def test_gemm_on_strided_views():
    """Q, K and V projections written into their column slices of one fused output, from an
    activation that is a column slice of a wider tensor; the rest of the output keeps its values."""
    _ops()
    rt = _runtime
    for dtype in (torch.bfloat16, torch.float16):
        wide = _rand(16, 640, dtype=dtype, hi=1.0, seed=30)
        x = wide[:, 64:576]                                   # [16, 512], rows 640 apart
        ws = [_rand(n, 512, dtype=dtype, hi=1.0, seed=31 + i) for i, n in enumerate((1024, 256, 256))]
        qkv = torch.full((16, 1536 + 8), 7.0, device="cuda", dtype=dtype)
        col = 0
        for w in ws:
            rt.gemm(x, w, qkv[:, col:col + w.shape[0]], stream=torch.cuda.current_stream().cuda_stream)
            col += w.shape[0]
        torch.cuda.synchronize()
        col = 0
        for w in ws:
            assert _error(qkv[:, col:col + w.shape[0]], x.double() @ w.double().T) <= TOL[dtype]
            col += w.shape[0]
        assert bool((qkv[:, 1536:] == 7.0).all()), "gemm wrote beyond its column slice"
        # The custom op takes strided inputs too ("nn": b is a column slice of a wider weight).
        b = _rand(512, 300, dtype=dtype, hi=1.0, seed=35)[:, 7:7 + 257]
        assert _error(torch.ops.ktune.gemm(x, b, None, "nn", "none"), x.double() @ b.double()) <= TOL[dtype]


def test_rmsnorm_and_residual():
    ops = _ops()
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        x, r, w = _rand(7, 4095, dtype=dtype, seed=4), _rand(7, 4095, dtype=dtype, seed=5), _rand(4095, dtype=dtype, seed=6)
        assert _error(ops.rmsnorm(x, w, 0.5), _rms_ref(x, w, 0.5)) <= TOL[dtype]
        y, s = ops.rmsnorm_residual(x, r, w, 0.5)
        s_ref = (x.double() + r.double()).to(dtype)
        assert _error(s, s_ref) <= TOL[dtype]
        assert _error(y, _rms_ref(s_ref, w, 0.5)) <= TOL[dtype]


def _rope_table(max_pos, d, theta=10000.0):
    j = torch.arange(d // 2, device="cuda", dtype=torch.float64)
    angle = torch.arange(max_pos, device="cuda", dtype=torch.float64)[:, None] * theta ** (-2 * j / d)
    return torch.cat([angle.cos(), angle.sin()], dim=1).float()


def _rope_ref(x, w, table, pos, eps, style):
    d = x.shape[-1]
    n = _rms_ref(x, w, eps)
    cs = table.double()[pos.long() % table.shape[0]][:, None, :]
    c, s = cs[..., : d // 2], cs[..., d // 2:]
    a, b = (n[..., 0::2], n[..., 1::2]) if style == "gptj" else (n[..., : d // 2], n[..., d // 2:])
    out = torch.empty_like(n)
    if style == "gptj":
        out[..., 0::2], out[..., 1::2] = a * c - b * s, b * c + a * s
    else:
        out[..., : d // 2], out[..., d // 2:] = a * c - b * s, b * c + a * s
    return out


def test_rmsnorm_rope_both_styles():
    ops = _ops()
    tokens, hq, hk, d, max_pos = 5, 7, 3, 128, 37
    table = _rope_table(max_pos, d)
    pos = torch.tensor([3, 36, 40, 0, 511], device="cuda", dtype=torch.int32)
    q, k = _rand(tokens, hq, d, seed=7), _rand(tokens, hk, d, seed=8)
    qw, kw = _rand(d, seed=9), _rand(d, seed=10)
    for style in ("neox", "gptj"):
        qo, ko = ops.rmsnorm_rope(q, k, qw, kw, table, pos, 0.25, style)
        assert _error(qo, _rope_ref(q, qw, table, pos, 0.25, style)) <= 1e-2, style
        assert _error(ko, _rope_ref(k, kw, table, pos, 0.25, style)) <= 1e-2, style


def test_softmax_causal_and_swiglu():
    ops = _ops()
    rows, cols = 5, 3001
    x = _rand(rows, cols, hi=8.0, seed=11)
    s = 0.125 * x.double()
    mask = torch.arange(cols, device="cuda")[None, :] > (torch.arange(rows, device="cuda")[:, None] + cols - rows)
    ref = torch.softmax(s.masked_fill(mask, -math.inf), dim=-1)
    assert _error(ops.softmax(x, 0.125, "causal", None), ref) <= 1e-2
    g = _rand(9, 2 * 1377, hi=4.0, seed=12)
    gate, up = g[:, :1377].double(), g[:, 1377:].double()
    assert _error(ops.swiglu(g), gate / (1 + torch.exp(-gate)) * up) <= 1e-2


def _attention_ref(q, k, v, lens, scale):
    b, hq, d = q.shape
    hk = k.shape[1]
    out = torch.zeros(b, hq, d, dtype=torch.float64, device="cuda")
    for i in range(b):
        n = int(lens[i])
        if n == 0:
            continue
        kk = k[i, :, :n].double().repeat_interleave(hq // hk, dim=0)
        vv = v[i, :, :n].double().repeat_interleave(hq // hk, dim=0)
        p = torch.softmax((q[i].double()[:, None, :] * kk).sum(-1) * scale, dim=-1)
        out[i] = (p[..., None] * vv).sum(1)
    return out


def test_decode_attention_with_lengths():
    ops = _ops()
    b, hq, hk, seq_max, d = 3, 28, 4, 1100, 128
    q, k, v = _rand(b, hq, d, seed=13), _rand(b, hk, seq_max, d, seed=14), _rand(b, hk, seq_max, d, seed=15)
    lens = torch.tensor([0, 517, 1037], device="cuda", dtype=torch.int32)
    got = ops.decode_attention(q, k, v, lens, 0.0)
    assert _error(got, _attention_ref(q, k, v, lens.tolist(), 1 / math.sqrt(d))) <= 1e-2


def test_fp8_gemm():
    if torch.cuda.get_device_capability() < (8, 9):
        return  # fp8 needs sm_89
    ops = _ops()
    a = _rand(37, 512, hi=2.0, seed=16).float().to(torch.float8_e4m3fn)
    b = _rand(301, 512, hi=2.0, seed=17).float().to(torch.float8_e4m3fn)
    sa, sb = torch.tensor([0.75], device="cuda"), torch.tensor([1.25], device="cuda")
    ref = (a.double() @ b.double().T) * 0.75 * 1.25
    assert _error(ops.fp8_gemm(a, b, sa, sb), ref) <= 1e-2


def _block(ops, x, w, r, wq):
    h, r2 = ops.rmsnorm_residual(x, r, w, 1e-6)
    return ops.swiglu(ops.gemm(h, wq, None, "nt", "none")), r2


def test_graph_capture_and_torch_compile():
    ops = _ops()
    x, r, w = _rand(8, 1024, seed=18), _rand(8, 1024, seed=19), _rand(1024, seed=20)
    wq = _rand(2 * 768, 1024, hi=0.1, seed=21)
    want, want_r = _block(ops, x, w, r, wq)  # eager (also the warm-up that prepares the keys)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got, got_r = _block(ops, x, w, r, wq)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(got, want) and torch.equal(got_r, want_r)
    compiled = torch.compile(lambda *t: _block(ops, *t), fullgraph=True)
    c, c_r = compiled(x, w, r, wq)
    assert torch.equal(c, want) and torch.equal(c_r, want_r)


if __name__ == "__main__":
    if _WHY is not None:
        print(f"SKIPPED: {_WHY}")
        sys.exit(0)
    failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print(f"PASSED {name}")
            except Exception as e:  # noqa: BLE001 - report and go on
                failed += 1
                print(f"FAILED {name}: {type(e).__name__}: {e}")
    print(f"{failed} failed")
    sys.exit(1 if failed else 0)
