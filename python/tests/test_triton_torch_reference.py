"""A torch function as a Triton kernel's reference, without a GPU (torch on the CPU): a key's inputs
made as the description's fills say and the function's outputs saved as the key's files, once; a
call's own tensors taken as the inputs; the description naming the data folder and the function,
which ktune's reader accepts (`ktune tune --compile-only`); a failing function is bad input.
Skips without torch or Triton."""

import random
import subprocess

import pytest

triton = pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")
torch = pytest.importorskip("torch", reason="torch is not installed (scripts/install-deps.sh --with-torch)")

import triton.language as tl  # noqa: E402

from ktune import BadInputError  # noqa: E402
from ktune import triton as kt  # noqa: E402
from ktune._executable import ktune_executable  # noqa: E402


@triton.jit
def scale_rows(x_ptr, ids_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * n + i, tl.load(x_ptr + row * n + i, mask=i < n) * 2, mask=i < n)


def doubled(x_ptr, ids_ptr, y_ptr, n):
    """The reference: y = 2 x (written into the float32 output it is given)."""
    y_ptr.copy_(x_ptr.float() * 2)


def _description(reference=None, name="torch_checked_scale"):
    return kt.Description(
        scale_rows, [triton.Config({"BLOCK": b}, num_warps=w, num_stages=1) for b in (64, 128) for w in (1, 2)],
        dims=["rows", "n"], dtypes=["bf16", "f16"], grid="rows", name=name,
        args={"x_ptr": kt.input_buffer("rows * n"), "ids_ptr": kt.input_buffer("rows", type="i32",
                                                                                fill={"min": 0, "max": "rows - 1"}),
              "y_ptr": kt.output_buffer("rows * n"), "n": kt.scalar("n")},
        reference=reference or kt.TorchReference(doubled, tolerance={"y_ptr": 1e-2}, device="cpu"))


def _read(path, dtype):
    return torch.frombuffer(bytearray(path.read_bytes()), dtype=dtype)


def test_a_keys_inputs_and_expected_outputs_are_saved_once(tmp_path):
    d = _description()
    rows, n = random.randrange(1, 40), random.randrange(1, 128)
    folder = d.write(tmp_path, needs=[("bf16", {"rows": rows, "n": n})], data=True)
    key = folder / f"{d.name}.data" / "bf16" / f"rows={rows},n={n}"
    x = _read(key / "x_ptr.bin", torch.bfloat16)
    ids = _read(key / "ids_ptr.bin", torch.int32)
    y = _read(key / "y_ptr.bin", torch.float32)
    assert x.numel() == rows * n and ids.numel() == rows and y.numel() == rows * n
    magnitude = x.float().abs()
    assert bool(((magnitude >= 0.25) & (magnitude <= 1.0)).all()), "the default fill (bf16 may round up to 1)"
    assert bool((x < 0).any()) or x.numel() < 8
    assert bool(((ids >= 0) & (ids <= rows - 1)).all()), "the described range fill"
    assert torch.equal(y, x.float() * 2)
    assert sorted(p.name for p in key.iterdir()) == [".done", "ids_ptr.bin", "x_ptr.bin", "y_ptr.bin"]
    stamp = (key / "y_ptr.bin").stat().st_mtime_ns
    d.write(tmp_path, needs=[("bf16", f"rows={rows},n={n}")], data=True)
    assert (key / "y_ptr.bin").stat().st_mtime_ns == stamp, "computed once a key"
    toml = (folder / f"{d.name}.toml").read_text()
    assert f'data = "{d.name}.data"' in toml and "producer = \"torch reference" in toml
    assert f"{doubled.__module__}:doubled, source " in toml and not (folder / f"{d.name}.cu").exists()


def test_a_calls_own_tensors_are_the_inputs_when_they_fit(tmp_path):
    d = _description()
    rows, n = 4, 32
    x = torch.randn(rows, n).to(torch.float16)
    folder = d.write(tmp_path, needs=[("f16", {"rows": rows, "n": n})], data=True,
                     inputs={"x_ptr": x, "ids_ptr": torch.ones(99, dtype=torch.int32)})  # ids: not its size
    key = folder / f"{d.name}.data" / "f16" / f"rows={rows},n={n}"
    assert torch.equal(_read(key / "x_ptr.bin", torch.float16), x.reshape(-1))
    assert torch.equal(_read(key / "y_ptr.bin", torch.float32), x.reshape(-1).float() * 2)
    assert _read(key / "ids_ptr.bin", torch.int32).numel() == rows


def test_ktunes_reader_takes_the_description_and_compile_only_needs_no_data(tmp_path):
    d = _description()
    doc = d.write(tmp_path, needs=[("bf16", "rows=8,n=100")])
    assert not (doc / f"{d.name}.data").exists(), "nothing computed without data=True"
    done = subprocess.run([ktune_executable(), "tune", "--kernel-dir", str(doc), "--kernel", d.name, "--shape",
                           "rows=8,n=100", "--dtype", "bf16", "--compile-only", "--arch", "sm_90", "--db",
                           str(tmp_path / "t.db"), "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert '"skipped":' in done.stdout and '"kernel":"torch_checked_scale"' in done.stdout.replace(" ", "")


def test_another_function_is_another_kernel_and_a_failing_one_is_bad_input(tmp_path):
    def halved(x_ptr, ids_ptr, y_ptr, n):
        y_ptr.copy_(x_ptr.float() / 2)

    assert _description().identity("sm_90") != _description(kt.TorchReference(halved)).identity("sm_90")

    def broken(x_ptr, ids_ptr, y_ptr, n):
        raise ValueError("no such op")

    with pytest.raises(BadInputError, match="torch reference failed for rows=2,n=3 bf16: ValueError: no such op"):
        _description(kt.TorchReference(broken, device="cpu")).write(tmp_path, needs=[("bf16", "rows=2,n=3")],
                                                                      data=True)
    with pytest.raises(BadInputError, match="CudaReference or a TorchReference"):
        _description(reference=doubled)
