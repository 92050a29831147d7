"""Compilation in parallel with measurement, without a GPU. Description.start_write lists every cubin
it will compile in the folder's index as pending before any compile ends, then each one whole (or
failed, with Triton's reason) as its compile ends; `ktune tune` started on the folder meanwhile
waits for each pending cubin and decides every config: the compiled ones go on (to "skipped" under
--compile-only), a failed one is a compile error carrying Triton's message; the next write compiles
a failed entry again."""

import json
import pathlib
import random
import sqlite3
import subprocess
import time

import pytest

triton = pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")
import triton.language as tl  # noqa: E402

from ktune import triton as kt  # noqa: E402
from ktune._executable import ktune_executable  # noqa: E402
from ktune.triton import cubin_index  # noqa: E402

LIMIT = 1024


@triton.jit
def capped_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 1024, "capped_scale takes BLOCK up to 1024")
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) * 3, mask=i < n)


BLOCKS = (128, 256, 512, 1024, 2048)  # 2048 fails its compile (the static_assert)
CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=1) for b in BLOCKS for w in (1, 4)]
REFERENCE = r"""
template <typename T>
__global__ void triple(const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = static_cast<T>(static_cast<float>(x[i]) * 3.0f);
}
"""
SCALE = kt.Description(capped_scale, CONFIGS, dims=["n"], dtypes=["f16"],
                       args={"x_ptr": kt.input_buffer("n"), "y_ptr": kt.output_buffer("n"), "n": kt.scalar("n")},
                       grid="ceil_div(n, BLOCK)",
                       reference=kt.CudaReference(REFERENCE, "triple", grid="ceil_div(n, 256)", block=256))


def _index(folder):
    return cubin_index.read(pathlib.Path(folder) / f"{SCALE.name}.cubins" / "index.toml")[0]


def _block(entry):
    return entry["config"]["BLOCK"]


def test_cubins_are_listed_pending_then_whole_or_failed(tmp_path):
    n = random.randrange(1, 1 << 20)
    writing = SCALE.start_write(tmp_path, needs=[("f16", {"n": n})], workers=2)
    before = _index(writing.folder)
    # one specialization a config for this n: every cubin listed, none compiled yet
    assert len(before) == len(CONFIGS) and all(e["pending"] for e in before)
    assert all("entry" not in e and "shared" not in e for e in before)
    assert sorted(e["threads"] for e in before) == sorted(32 * c.num_warps for c in CONFIGS)
    failures = writing.finish()
    assert sorted(pathlib.Path(f).name.split(".")[4] for f, _ in failures) == ["BLOCK=2048", "BLOCK=2048"]
    after = _index(writing.folder)
    assert len(after) == len(CONFIGS) and not any(e.get("pending") for e in after)
    for e in after:
        if _block(e) > LIMIT:
            assert "takes BLOCK up to 1024" in e["failed"] and "entry" not in e
        else:
            assert "failed" not in e and e["entry"] == "capped_scale"
            cubin = writing.folder / f"{SCALE.name}.cubins" / e["file"]
            assert cubin.read_bytes()[:4] == b"\x7fELF"
    # failed entries do not count as held: the next write compiles them again (and fails again);
    # meanwhile the index keeps saying failed, which a pending entry never hides
    again = SCALE.start_write(tmp_path, needs=[("f16", {"n": n})], workers=2)
    assert sorted(_block(e) for e in _index(again.folder) if "failed" in e) == [2048, 2048]
    assert len(again.finish()) == 2


def test_ktune_tune_started_while_cubins_compile_decides_every_config(tmp_path):
    n = random.randrange(1, 1 << 20)
    shape = f"n={n}"
    writing = SCALE.start_write(tmp_path / "folders", needs=[("f16", shape)], workers=1)
    assert all(e["pending"] for e in _index(writing.folder))  # ktune starts before any cubin exists
    db = tmp_path / "t.db"
    proc = subprocess.Popen([ktune_executable(), "tune", "--kernel-dir", str(writing.folder), "--kernel", SCALE.name,
                             "--dtype", "f16", "--shape", shape, "--compile-only", "--arch", "sm_90", "--json",
                             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # finish() lists the cubins; until then ktune has read an index of pending ones only, and waits
    time.sleep(1.0)
    writing.finish()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    (key,) = json.loads(out)["keys"]
    assert key["outcomes"] == {"skipped": 8, "compile_error": 2}, key["outcomes"]
    rows = sqlite3.connect(db).execute("SELECT config_name, outcome, reason FROM measurements WHERE shape = ?",
                                       (shape,)).fetchall()
    assert len(rows) == len(CONFIGS)
    for name, outcome, reason in rows:
        if "BLOCK=2048" in name:
            assert outcome == "compile_error" and "takes BLOCK up to 1024" in reason, (name, outcome, reason)
        else:
            assert outcome == "skipped" and "compile-only" in reason, (name, outcome, reason)


def test_tune_overlaps_and_compile_only_compiles_first(tmp_path, monkeypatch):
    """tune() lists the cubins pending and starts ktune at once; under compile_only it compiles first
    (the report reads every cubin) and raises the first compile error, as write() does."""
    calls = []
    real = kt.Description.start_write

    def spy(self, *args, **kwargs):
        calls.append(kwargs.get("announce"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(kt.Description, "start_write", spy)
    with pytest.raises(Exception, match="takes BLOCK up to 1024"):
        from ktune.triton.tune import tune
        tune(SCALE, [{"n": 4096}], "f16", db=tmp_path / "t.db", compile_only=True, root=tmp_path)
    assert calls == [False]
