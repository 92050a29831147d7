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
    """x [tokens, heads, d] normalised per head with w (None: as it is), the first rot_dim =
    table.shape[1] elements of each head rotated at the table's row pos % max_pos."""
    n = _rms_ref(x, w, eps) if w is not None else x.double()
    r = table.shape[1]
    cs = table.double()[pos.long() % table.shape[0]][:, None, :]
    c, s = cs[..., : r // 2], cs[..., r // 2:]
    a, b = (n[..., 0:r:2], n[..., 1:r:2]) if style == "gptj" else (n[..., : r // 2], n[..., r // 2:r])
    out = n.clone()
    if style == "gptj":
        out[..., 0:r:2], out[..., 1:r:2] = a * c - b * s, b * c + a * s
    else:
        out[..., : r // 2], out[..., r // 2:r] = a * c - b * s, b * c + a * s
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


def _append_ref(k_rot, v, pos, k_cache, v_cache, seq_tokens, block_table):
    """The caches after appending token t's k_rot[t] and v[t] at pos[t]: k float64, v in its own
    dtype (a copy), and the rows written (bool [sequences or blocks, rows])."""
    k_ref, v_ref = k_cache.double().clone(), v_cache.clone()
    rows = k_cache.shape[2]
    written = torch.zeros(k_cache.shape[0], rows, dtype=torch.bool, device="cuda")
    for t, p in enumerate(pos.tolist()):
        slot = t // seq_tokens
        if block_table is not None:
            slot = int(block_table[slot, (p // rows) % block_table.shape[1]])
            if not 0 <= slot < k_cache.shape[0]:
                continue  # a block id outside the cache: nothing written
        k_ref[slot, :, p % rows] = k_rot[t]
        v_ref[slot, :, p % rows] = v[t]
        written[slot, p % rows] = True
    return k_ref, v_ref, written


def _check_append(q_out, k_cache, v_cache, inputs, k_before, v_before, what, tol=1e-2):
    """q_out and the caches against the float64 reference; rows not appended to are unchanged."""
    q, k, v, table, pos, qw, kw, block_table, seq_tokens, eps, style = inputs
    assert _error(q_out, _rope_ref(q, qw, table, pos, eps, style)) <= tol, what
    k_ref, v_ref, written = _append_ref(_rope_ref(k, kw, table, pos, eps, style), v, pos, k_before, v_before,
                                        seq_tokens, block_table)
    got, ref, before = k_cache.transpose(1, 2), k_ref.transpose(1, 2), k_before.transpose(1, 2)  # [S, rows, H, d]
    assert bool(written.any()), what
    assert _error(got[written], ref[written]) <= tol, what
    assert torch.equal(got[~written], before[~written]), f"{what}: k_cache rows not appended to changed"
    assert torch.equal(v_cache, v_ref), f"{what}: v_cache is not v copied to the appended rows, the rest as it was"


def _rope_append_case(ops, positions, seq_tokens, cache_shape, block_table, style, norm, rot, dtype=None, seed=40):
    """One rope_append call (8 query heads over 2 kv heads of 128) on random inputs and caches
    (dtype None: bf16)."""
    dtype = dtype or torch.bfloat16
    tokens, hq, hk, d = len(positions), 8, 2, 128
    table = _rope_table(4096, rot)
    pos = torch.tensor(positions, device="cuda", dtype=torch.int32)
    q, k, v = (_rand(tokens, h, d, dtype=dtype, seed=seed + i) for i, h in enumerate((hq, hk, hk)))
    qw, kw = (_rand(d, dtype=dtype, seed=seed + 3), _rand(d, dtype=dtype, seed=seed + 4)) if norm else (None, None)
    k_cache, v_cache = _rand(*cache_shape, dtype=dtype, seed=seed + 5), _rand(*cache_shape, dtype=dtype, seed=seed + 6)
    q_in, k_before, v_before = q.clone(), k_cache.clone(), v_cache.clone()
    q_out = ops.rope_append(q, k, v, table, pos, k_cache, v_cache, qw, kw, block_table, seq_tokens, 0.25, style)
    what = f"{style} norm={norm} rot_dim={rot} paged={block_table is not None} tokens={tokens} {dtype}"
    _check_append(q_out, k_cache, v_cache, (q, k, v, table, pos, qw, kw, block_table, seq_tokens, 0.25, style),
                  k_before, v_before, what, TOL[dtype])
    assert torch.equal(q, q_in), f"{what}: the op wrote its input q"


def _block_table(sequences, max_blocks, num_blocks, seed):
    """int32 [sequences, max_blocks]: distinct blocks of [0, num_blocks) in a random order."""
    g = torch.Generator().manual_seed(seed)
    return torch.randperm(num_blocks, generator=g)[: sequences * max_blocks].view(sequences, max_blocks).to(
        device="cuda", dtype=torch.int32)


def test_rope_append_decode_contiguous_and_paged():
    """A decode step: 8 sequences of one token each at different positions (130: past the 128
    rows, the ring's row 2). Paged: blocks of 16, two sequences' blocks outside the cache (-1 and
    num_blocks), which writes nothing."""
    ops = _ops()
    positions = [0, 5, 17, 31, 64, 100, 127, 130]
    paged_table = _block_table(8, 8, 72, seed=41)
    paged_table[3, (positions[3] // 16) % 8] = -1
    paged_table[5, (positions[5] // 16) % 8] = 72
    for paged in (False, True):
        for style in ("neox", "gptj"):
            for norm in (False, True):
                for rot in (128, 64):
                    _rope_append_case(ops, positions, 1, (72, 2, 16, 128) if paged else (8, 2, 128, 128),
                                      paged_table if paged else None, style, norm, rot)


def test_rope_append_prefill_contiguous_and_paged():
    """One prompt chunk of 40 tokens at positions 5..44 (seq_tokens 40): into sequence 0 of a
    contiguous cache of 2 (sequence 1 untouched), or into blocks 7, 2, 9 of a paged cache of 10
    blocks of 16 (the others untouched)."""
    ops = _ops()
    positions = list(range(5, 45))
    paged_table = torch.tensor([[7, 2, 9, 4]], device="cuda", dtype=torch.int32)
    for paged in (False, True):
        for style in ("neox", "gptj"):
            for norm in (False, True):
                for rot in (128, 64):
                    _rope_append_case(ops, positions, 40, (10, 2, 16, 128) if paged else (2, 2, 64, 128),
                                      paged_table if paged else None, style, norm, rot)
    _rope_append_case(ops, positions, 40, (2, 2, 64, 128), None, "neox", True, 64, dtype=torch.float16)


def test_rope_append_in_place_through_the_runtime():
    """Runtime.rope_append without q_out rotates q in place."""
    _ops()
    positions, table = torch.tensor([3, 70, 9], device="cuda", dtype=torch.int32), _rope_table(4096, 64)
    q, k, v = _rand(3, 8, 128, seed=50), _rand(3, 2, 128, seed=51), _rand(3, 2, 128, seed=52)
    k_cache, v_cache = _rand(3, 2, 96, 128, seed=53), _rand(3, 2, 96, 128, seed=54)
    q_in, k_before, v_before = q.clone(), k_cache.clone(), v_cache.clone()
    _runtime.rope_append(q, k, v, table, positions, k_cache, v_cache, style="gptj",
                         stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    _check_append(q, k_cache, v_cache, (q_in, k, v, table, positions, None, None, None, 1, 1e-6, "gptj"),
                  k_before, v_before, "in place")


def test_rope_append_graph_replay_with_new_positions_and_torch_compile():
    """A paged decode step (Qwen3: the norm) captured once and replayed at the next positions with
    new q, k, v; then the same call under torch.compile(fullgraph=True) against eager."""
    ops = _ops()
    b, hq, hk, d = 8, 8, 2, 128
    table = _rope_table(4096, d)
    block_table = _block_table(b, 8, 64, seed=60)
    q, k, v = _rand(b, hq, d, seed=61), _rand(b, hk, d, seed=62), _rand(b, hk, d, seed=63)
    qw, kw = _rand(d, seed=64), _rand(d, seed=65)
    k_cache, v_cache = _rand(64, hk, 16, d, seed=66), _rand(64, hk, 16, d, seed=67)
    pos = torch.tensor([3, 9, 15, 16, 40, 77, 100, 120], device="cuda", dtype=torch.int32)

    def step(*t):
        return ops.rope_append(*t, qw, kw, block_table, 1, 1e-6, "neox")

    step(q, k, v, table, pos, k_cache, v_cache)  # eager: prepares the key before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        q_out = step(q, k, v, table, pos, k_cache, v_cache)
    for replay in (1, 2):
        pos += 1  # the next decode step: 16 -> 17 stays in its block, 15 -> 16 moves to the next
        for i, t in enumerate((q, k, v)):
            t.copy_(_rand(*t.shape, seed=70 + 3 * replay + i))
        k_before, v_before = k_cache.clone(), v_cache.clone()
        graph.replay()
        torch.cuda.synchronize()
        _check_append(q_out, k_cache, v_cache, (q, k, v, table, pos, qw, kw, block_table, 1, 1e-6, "neox"),
                      k_before, v_before, f"replay {replay}")

    k_eager, v_eager, k_compiled, v_compiled = k_cache.clone(), v_cache.clone(), k_cache.clone(), v_cache.clone()
    want = step(q, k, v, table, pos, k_eager, v_eager)
    got = torch.compile(step, fullgraph=True)(q, k, v, table, pos, k_compiled, v_compiled)
    torch.cuda.synchronize()
    assert torch.equal(got, want) and torch.equal(k_compiled, k_eager) and torch.equal(v_compiled, v_eager)


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


def test_runtime_softmax_into_given_outputs_through_the_native_door():
    """ktune.Runtime.softmax on torch tensors with y given: through the native door where built
    (required when KTUNE_TORCH_NATIVE=1), every mask against float64 torch, on the current and on a
    given stream; bad input raises BadInputError naming it, a closed runtime refuses."""
    import ktune
    from ktune import _native
    _ops()
    rt = _runtime
    rows, cols = 6, 1500
    x = _rand(rows, cols, hi=8.0, seed=40)
    if os.environ.get("KTUNE_TORCH_NATIVE") == "1":
        assert _native.runtime_door(x) is not None, "the native door does not serve torch tensors"
    s = 0.25 * x.double()
    causal = torch.arange(cols, device="cuda")[None, :] > (torch.arange(rows, device="cuda")[:, None] + cols - rows)
    lengths = torch.tensor([1, 7, 1500, 640, 999, 2], device="cuda", dtype=torch.int32)
    padded = torch.arange(cols, device="cuda")[None, :] >= lengths[:, None]
    side = torch.cuda.Stream()
    for mask, hidden, stream in (("none", None, None), ("causal", causal, None), ("padding", padded, side)):
        ref = torch.softmax(s if hidden is None else s.masked_fill(hidden, -math.inf), dim=-1)
        y = torch.full_like(x, 7.0)
        if stream is not None:
            stream.wait_stream(torch.cuda.current_stream())
        got = rt.softmax(x, y, scale=0.25, mask=None if mask == "none" else mask,
                         lengths=lengths if mask == "padding" else None, stream=stream)
        if stream is not None:
            stream.synchronize()
        assert got is y and _error(y, ref) <= 1e-2, mask
    _raises(lambda: rt.softmax(x, torch.empty(rows, cols - 1, device="cuda", dtype=x.dtype)), ktune.BadInputError,
            ["y", "shape"])
    _raises(lambda: rt.softmax(x, torch.empty_like(x).float()), ktune.BadInputError, ["y", "the other tensors"])
    _raises(lambda: rt.softmax(x, torch.empty_like(x), mask="padding", lengths=lengths.long()),
            ktune.BadInputError, ["lengths", "i32"])
    closed = ktune.Runtime(db=os.path.join(tempfile.mkdtemp(), "closed.db"))
    closed.close()
    _raises(lambda: closed.softmax(x, torch.empty_like(x)), ktune.BadInputError, ["closed"])


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


def test_paged_decode_attention_equals_the_contiguous_cache():
    ops = _ops()
    b, hq, hk, seq_max, d, block = 3, 14, 2, 1040, 64, 16
    q, k, v = _rand(b, hq, d, seed=23), _rand(b, hk, seq_max, d, seed=24), _rand(b, hk, seq_max, d, seed=25)
    lens = torch.tensor([1, 600, 1033], device="cuda", dtype=torch.int32)
    per_seq = seq_max // block
    # The blocks of all sequences shuffled into one pool; the table says where each went.
    where = torch.randperm(b * per_seq, generator=torch.Generator().manual_seed(26)).to("cuda")
    table = where.view(b, per_seq).to(torch.int32)
    pool_k = torch.empty(b * per_seq, hk, block, d, dtype=k.dtype, device="cuda")
    pool_v = torch.empty_like(pool_k)
    pool_k[where] = k.view(b, hk, per_seq, block, d).transpose(1, 2).reshape(b * per_seq, hk, block, d)
    pool_v[where] = v.view(b, hk, per_seq, block, d).transpose(1, 2).reshape(b * per_seq, hk, block, d)
    got = ops.decode_attention(q, pool_k, pool_v, lens, 0.0, table)
    assert _error(got, _attention_ref(q, k, v, lens.tolist(), 1 / math.sqrt(d))) <= 1e-2
    assert _error(got, ops.decode_attention(q, k, v, lens, 0.0).double()) <= 1e-2


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


def _raises(fn, kind, words):
    try:
        fn()
    except kind as e:
        assert all(w in str(e) for w in words), f"{e!r} does not name {words}"
        return
    raise AssertionError(f"no {kind.__name__} naming {words}")


def test_native_kernels_serve_the_bound_runtime_and_refuse_bad_input():
    """The C++ kernels (where built; required when KTUNE_TORCH_NATIVE=1) launch from the runtime
    use_runtime() bound, refuse bad input with a ValueError naming it, and never launch from a closed
    runtime (the next call makes a default one)."""
    import ktune
    import ktune.torch as kt
    ops = _ops()
    if os.environ.get("KTUNE_TORCH_NATIVE") == "1":
        assert kt.NATIVE, kt.native_reason
    x, w = _rand(3, 640, seed=30), _rand(640, seed=31)
    misses = os.path.join(tempfile.mkdtemp(), "misses.txt")
    other = ktune.Runtime(db=os.path.join(tempfile.mkdtemp(), "other.db"), record_misses=misses)
    kt.use_runtime(other)
    try:
        assert _error(ops.rmsnorm(x, w, 1e-5), _rms_ref(x, w, 1e-5)) <= TOL[torch.bfloat16]
        torch.cuda.synchronize()
        with open(misses) as f:
            assert "hidden=640" in f.read(), "the key was not served by the runtime use_runtime() named"
        _raises(lambda: ops.rmsnorm(x.float(), w, 1e-6), ValueError, ["w", "the other tensors"])
        _raises(lambda: ops.rmsnorm(x.t(), _rand(3, seed=32), 1e-6), ValueError, ["x", "not contiguous"])
        _raises(lambda: ops.gemm(x, _rand(5, 640, seed=33), x[0], "nt", "none"), ValueError, ["bias given"])
        _raises(lambda: ops.gemm(x, _rand(5, 641, seed=33), None, "nt", "none"), ValueError, ["b", "shape"])
        _raises(lambda: ops.softmax(x, 1.0, "sideways", None), ValueError, ["sideways"])
        _raises(lambda: ops.softmax(x, 1.0, "padding", torch.ones(3, device="cuda")), ValueError, ["lengths"])
        q, k, v = _rand(2, 4, 64, seed=34), _rand(2, 2, 64, seed=35), _rand(2, 2, 64, seed=36)
        table, pos = _rope_table(256, 64), torch.tensor([3, 9], device="cuda", dtype=torch.int32)
        kc, vc = _rand(2, 2, 32, 64, seed=37), _rand(2, 2, 32, 64, seed=38)
        _raises(lambda: ops.rope_append(q, k, v, table, pos, kc, vc, style="sideways"), ValueError, ["sideways"])
        _raises(lambda: ops.rope_append(q, k[:, :, :32].contiguous(), v, table, pos, kc, vc), ValueError,
                ["k", "shape"])
        _raises(lambda: ops.rope_append(q, k, v, table, pos.long(), kc, vc), ValueError, ["positions", "i32"])
        _raises(lambda: ops.decode_attention(q, kc, vc, (pos + 1).float(), 0.0), ValueError, ["context_lens", "i32"])
        _raises(lambda: ops.decode_attention(q, kc[:, :, :, :32].contiguous(), vc, pos + 1, 0.0), ValueError,
                ["k_cache", "shape"])
        other.close()  # the next call is served by a runtime made anew, not by the freed one
        assert _error(ops.rmsnorm(x, w, 1e-5), _rms_ref(x, w, 1e-5)) <= TOL[torch.bfloat16]
    finally:
        kt.use_runtime(_runtime)
    assert _error(ops.rmsnorm(x, w, 1e-5), _rms_ref(x, w, 1e-5)) <= TOL[torch.bfloat16]


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
    from standalone import run
    sys.exit(run(globals(), _WHY))
