"""ktune.triton on a GPU: the example Triton kernels (examples/triton: RMSNorm, a 24-config matmul)
tuned through ktune's worker, their winners verified there against the CUDA references and served
back through ktune.triton.autotune, compared here with torch in float64; a planted wrong config and
a planted crashing config never win; a second process launches the stored winner without tuning or
compiling any other config; a miss is recorded and `python -m ktune.triton tune FILE` tunes it; a
key of a kernel with a `prune_configs_by` tunes and serves only the configs it keeps; a torch
function (or a Triton kernel called from one) as the reference verifies a key's configs and keeps
the planted ones from winning.
Skips with the reason without torch, Triton or a CUDA device. Runs under pytest, or alone:
`python3 test_triton_gpu.py` (one line a test, exit status 1 when one fails)."""

import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "examples" / "triton"))

try:
    import torch
    import triton
    import triton.language as tl
    _WHY = None if torch.cuda.is_available() else "torch sees no CUDA device"
except ImportError as e:
    torch = triton = tl = None
    _WHY = f"{e.name} is not installed"

try:
    import pytest
    pytestmark = pytest.mark.skipif(_WHY is not None, reason=_WHY or "")
except ImportError:
    pytest = None

_TMP = pathlib.Path(tempfile.mkdtemp(prefix="ktune_triton_gpu_"))
os.environ["KTUNE_DB"] = str(_TMP / "triton.db")  # every lookup and tune of this file
os.environ["KTUNE_TRITON_DIR"] = str(_TMP / "folders")
os.environ["KTUNE_NO_PROGRESS"] = "1"


def _rand(*shape, seed, dtype=None):
    g = torch.Generator(device="cuda").manual_seed(seed)
    t = torch.rand(*shape, device="cuda", generator=g) * 1.5 + 0.25
    sign = torch.randint(0, 2, shape, device="cuda", generator=g) * 2 - 1
    return (t * sign).to(dtype or torch.bfloat16)


def _rel_error(got, want):
    return ((got.double() - want).norm() / want.norm()).item()


def _winner(doc):
    (key,) = doc["keys"]
    assert key.get("winner"), f"no winner: {json.dumps(key)}"
    return key


def test_rmsnorm_is_tuned_verified_and_served():
    import rmsnorm
    key = _winner(rmsnorm.rmsnorm_rows.tune([{"rows": 512, "n_cols": 4096}], "bf16"))
    assert key["outcomes"].get("ok", 0) >= 2, key["outcomes"]
    x, w = _rand(512, 4096, seed=1), _rand(4096, seed=2)
    y = rmsnorm.rmsnorm(x, w)
    assert rmsnorm.rmsnorm_rows.sources[("rows=512,n_cols=4096", "bf16")] == "tuned"
    from ktune import triton as kt
    config, doc = kt.best(rmsnorm.rmsnorm_rows.description, "rows=512,n_cols=4096", "bf16")
    assert config is rmsnorm.rmsnorm_rows.best_config and doc["verified"] is not False
    xd = x.double()
    want = xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + 1e-6) * w.double()
    assert _rel_error(y, want) <= 1e-2


def test_a_pruned_key_tunes_and_serves_only_the_configs_its_prune_keeps():
    import pruned_scale
    n = random.randrange(257, 512)  # keeps BLOCK 128 and 512, 1 and 4 warps
    key = _winner(pruned_scale.scale.tune([{"n": n}], "f16"))
    assert sum(key["outcomes"].values()) == 4 and key["outcomes"].get("ok", 0) >= 2, key["outcomes"]
    x = _rand(n, seed=5, dtype=torch.float16)
    y = torch.empty_like(x)
    pruned_scale.scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    assert pruned_scale.scale.sources[(f"n={n}", "f16")] == "tuned"
    assert pruned_scale.scale.best_config.kwargs["BLOCK"] in (128, 512)
    assert torch.equal(y, x * 2)


def test_matmul_is_tuned_verified_and_served():
    import matmul
    key = _winner(matmul.matmul_tiles.tune([{"m": 128, "n": 1024, "k": 512}], "bf16"))
    assert key["outcomes"].get("ok", 0) >= 12, key["outcomes"]
    a, b = _rand(128, 512, seed=3), _rand(512, 1024, seed=4)
    c = matmul.matmul(a, b)
    assert matmul.matmul_tiles.sources[("m=128,n=1024,k=512", "bf16")] == "tuned"
    assert _rel_error(c, a.double() @ b.double()) <= 1e-2


# A kernel with a planted wrong config (BLOCK narrower than the rows: a row half written) and a
# planted crashing one (a store 2^40 elements away).
SCALE_REFERENCE = r"""
template <typename T>
__global__ void scale_reference(const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = static_cast<T>(2.0f * static_cast<float>(x[i]));
}
"""


def _planted():
    from ktune import triton as kt

    @triton.jit
    def scale_planted(x_ptr, y_ptr, n, BLOCK: tl.constexpr, COVER: tl.constexpr, CRASH: tl.constexpr):
        offs = tl.program_id(0) * COVER + tl.arange(0, BLOCK)
        mask = (offs < n) & (tl.arange(0, BLOCK) < COVER)
        x = tl.load(x_ptr + offs, mask=mask)
        far = offs.to(tl.int64) + (CRASH * (1 << 40))
        tl.store(y_ptr + far, x * 2, mask=mask)

    configs = [triton.Config({"BLOCK": 512, "COVER": 1024, "CRASH": 0}, num_warps=4, num_stages=1),  # wrong
               triton.Config({"BLOCK": 1024, "COVER": 1024, "CRASH": 1}, num_warps=4, num_stages=1),  # crashes
               triton.Config({"BLOCK": 1024, "COVER": 1024, "CRASH": 0}, num_warps=4, num_stages=1),
               triton.Config({"BLOCK": 1024, "COVER": 1024, "CRASH": 0}, num_warps=8, num_stages=1)]
    return kt.autotune(configs=configs, key=["n"], dtypes=["bf16"],
                       args={"x_ptr": kt.input_buffer("n"), "y_ptr": kt.output_buffer("n"), "n": kt.scalar("n")},
                       grid="ceil_div(n, COVER)",
                       reference=kt.CudaReference(SCALE_REFERENCE, "scale_reference", "ceil_div(n, 256)", 256))(
                           scale_planted)


def test_planted_wrong_and_crashing_configs_never_win():
    k = _planted()
    key = _winner(k.tune([{"n": 1 << 20}], "bf16"))
    assert key["outcomes"].get("incorrect", 0) == 1, key["outcomes"]
    assert key["outcomes"].get("crashed", 0) + key["outcomes"].get("launch_error", 0) == 1, key["outcomes"]
    assert key["outcomes"].get("ok", 0) == 2, key["outcomes"]
    from ktune import triton as kt
    config, _ = kt.best(k.description, "n=1048576", "bf16")
    assert config.kwargs == {"BLOCK": 1024, "COVER": 1024, "CRASH": 0}, config


def _doubled(x_ptr, y_ptr, n):
    """The torch reference of the planted kernel: y = 2 x, in float32."""
    y_ptr.copy_(x_ptr.float() * 2)


def _doubled_by_triton(x_ptr, y_ptr, n):
    """The same reference as a Triton kernel, called on the tensors TorchReference hands it."""

    @triton.jit
    def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n).to(tl.float32) * 2, mask=i < n)

    double[(triton.cdiv(n, 1024),)](x_ptr, y_ptr, n, BLOCK=1024)


def test_a_torch_or_triton_reference_verifies_and_planted_configs_never_win():
    for reference, name in ((_doubled, "scale_planted_torch_checked"),
                            (_doubled_by_triton, "scale_planted_triton_checked")):
        _check_planted_against(reference, name)


def _check_planted_against(reference, name):
    from ktune import triton as kt
    planted = _planted()
    d = kt.Description(planted.fn, planted.description.configs, dims=["n"], args=planted.description.args,
                       grid="ceil_div(n, COVER)", dtypes=["bf16"], name=name,
                       reference=kt.TorchReference(reference))
    k = kt.Autotuner(planted.fn, d, key=["n"])
    n = random.randrange(1 << 18, 1 << 20)
    key = _winner(k.tune([{"n": n}], "bf16"))
    assert key["outcomes"].get("incorrect", 0) == 1, key["outcomes"]
    assert key["outcomes"].get("crashed", 0) + key["outcomes"].get("launch_error", 0) == 1, key["outcomes"]
    assert key["outcomes"].get("ok", 0) == 2, key["outcomes"]
    config, doc = kt.best(d, f"n={n}", "bf16")
    assert config.kwargs == {"BLOCK": 1024, "COVER": 1024, "CRASH": 0}, config
    assert doc["verified"] is True, doc


_SECOND_PROCESS = r"""
import json, sys
import torch, rmsnorm
x = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)
w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
y = rmsnorm.rmsnorm(x, w)
torch.cuda.synchronize()
caches = rmsnorm.rmsnorm_rows.fn.device_caches
compiled = sum(len(c[0]) for c in caches.values())
print(json.dumps({"sources": list(rmsnorm.rmsnorm_rows.sources.values()), "compiled": compiled,
                  "best": str(rmsnorm.rmsnorm_rows.best_config)}))
"""


def test_a_second_process_launches_the_stored_winner_without_tuning():
    test_rmsnorm_is_tuned_verified_and_served()  # the key is tuned (again: nothing is measured twice)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT / "examples" / "triton")]),
           "KTUNE_BIN": "/nonexistent/ktune"}  # a second process that tried to tune would fail
    out = subprocess.run([sys.executable, "-c", _SECOND_PROCESS], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["sources"] == ["tuned"] and doc["compiled"] == 1, doc


def test_a_miss_is_recorded_then_tuned_from_the_file():
    import rmsnorm
    misses = _TMP / "misses.keys"
    rmsnorm.rmsnorm_rows.record_misses = str(misses)
    x, w = _rand(96, 2048, seed=5), _rand(2048, seed=6)
    rmsnorm.rmsnorm(x, w)
    assert rmsnorm.rmsnorm_rows.sources[("rows=96,n_cols=2048", "bf16")] == "default"
    lines = [ln for ln in misses.read_text().splitlines() if not ln.startswith("#")]
    assert lines == ["triton:rmsnorm:rmsnorm_rows rows=96,n_cols=2048 bf16"], lines
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT / "examples" / "triton")])}
    out = subprocess.run([sys.executable, "-m", "ktune.triton", "tune", str(misses)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    _winner(json.loads(out.stdout.strip().splitlines()[-1]))
    from ktune import triton as kt
    config, _ = kt.best(rmsnorm.rmsnorm_rows.description, "rows=96,n_cols=2048", "bf16")
    assert config is not None


if __name__ == "__main__":
    from standalone import run
    sys.exit(run(globals(), _WHY))
