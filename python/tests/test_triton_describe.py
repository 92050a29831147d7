"""ktune.triton without a GPU: the example RMSNorm written as a ktune kernel folder (each config and
dtype compiled ahead of time for sm_90 into a cubin listed in the folder's cubin index), a tuning
compiling only its dtype's and shape's cubins and adding them to the index without touching the
kernel's hash, `ktune tune --compile-only` on it storing one row a config under a name that carries
Triton's version, a second write compiling nothing, and autotune's miss path: the default config served and
the key recorded once in the key-file format, which `python -m ktune.triton tune` reads back."""

import os
import pathlib
import sqlite3
import sys
import tomllib

import pytest

triton = pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")

from ktune import BadInputError  # noqa: E402
from ktune import triton as kt  # noqa: E402
from ktune.triton.offline import kernel_of  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "triton"))
import rmsnorm  # noqa: E402

KERNEL = "triton_rmsnorm_rmsnorm_rows"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return rmsnorm.rmsnorm_rows.description.write(tmp_path_factory.mktemp("folders"), arch="sm_90")


def _index(folder):
    return tomllib.loads((folder / f"{KERNEL}.cubins" / "index.toml").read_text())["cubin"]


def test_the_folder_lists_two_cubins_per_config_and_dtype(folder):
    d = tomllib.loads((folder / f"{KERNEL}.toml").read_text())
    assert d["dims"] == ["rows", "n_cols"] and d["template"][0]["params"]["num_warps"] == [1, 2, 4, 8, 16]
    assert d["prebuilt"]["arch"] == "sm_90" and d["prebuilt"]["producer"].startswith(f"triton {triton.__version__}")
    assert "cubin" not in d["prebuilt"]  # listed in the index, outside the kernel's hash
    cubins = _index(folder)
    # one compiled as Triton's JIT compiles a call with n_cols a multiple of 16, one for any n_cols
    assert sorted((c["config"]["num_warps"], c["dtype"], tuple(c["aligned"])) for c in cubins) == sorted(
        (w, t, a) for w in (1, 2, 4, 8, 16) for t in ("bf16", "f16") for a in (("n_cols",), ()))
    assert all(c["ones"] == [] for c in cubins)
    for c in cubins:
        assert (folder / f"{KERNEL}.cubins" / c["file"]).read_bytes()[:4] == b"\x7fELF"
        assert c["threads"] == 32 * c["config"]["num_warps"] and c["entry"] == "rmsnorm_rows"
        assert len(c["scratch"]) == 2 and c["name"].startswith(f"triton.{triton.__version__}.BLOCK=4096.")
    assert "rmsnorm_reference" in (folder / f"{KERNEL}.cu").read_text()


def test_writing_again_compiles_nothing_and_a_new_config_list_is_a_new_folder(folder):
    stamp = (folder / f"{KERNEL}.toml").stat().st_mtime_ns
    assert rmsnorm.rmsnorm_rows.description.write(folder.parent, arch="sm_90") == folder
    assert (folder / f"{KERNEL}.toml").stat().st_mtime_ns == stamp
    other = kt.Description(rmsnorm.rmsnorm_rows.fn, rmsnorm.rmsnorm_rows.description.configs[:2],
                           dims=["rows", "n_cols"], args=rmsnorm.rmsnorm_rows.description.args, grid="rows",
                           verify=False)
    assert other.identity("sm_90") != rmsnorm.rmsnorm_rows.description.identity("sm_90")


def test_a_tuning_compiles_only_its_dtype_and_specialization_and_adds_to_the_index(tmp_path):
    d = rmsnorm.rmsnorm_rows.description
    folder = d.write(tmp_path, arch="sm_90", needs=[("bf16", "rows=64,n_cols=4096")])
    toml_text = (folder / f"{KERNEL}.toml").read_text()

    def listed():
        return [(c["config"]["num_warps"], c["dtype"], tuple(c["aligned"])) for c in _index(folder)]

    # n_cols = 4096 is a multiple of 16: the aligned cubin of each bf16 config, nothing else
    assert listed() == [(w, "bf16", ("n_cols",)) for w in (1, 2, 4, 8, 16)]
    assert len(list((folder / f"{KERNEL}.cubins").glob("*.cubin"))) == 5
    # an odd n_cols adds the general cubins, each after its config's aligned one (the worker runs the
    # first that fits); f16 adds its own; the description, and so the kernel's hash, stays as it was
    d.write(tmp_path, arch="sm_90", needs=[("bf16", {"rows": 3, "n_cols": 3000}), ("f16", "rows=1,n_cols=32")])
    assert listed() == [e for w in (1, 2, 4, 8, 16) for e in
                        ((w, "bf16", ("n_cols",)), (w, "bf16", ()), (w, "f16", ("n_cols",)))]
    assert (folder / f"{KERNEL}.toml").read_text() == toml_text
    # asking again compiles nothing
    stamp = (folder / f"{KERNEL}.cubins" / "index.toml").stat().st_mtime_ns
    d.write(tmp_path, arch="sm_90", needs=[("bf16", "rows=8,n_cols=1024")])
    assert (folder / f"{KERNEL}.cubins" / "index.toml").stat().st_mtime_ns == stamp
    with pytest.raises(BadInputError, match="not one of its dtypes"):
        d.write(tmp_path, arch="sm_90", needs=[("f32", "rows=1,n_cols=16")])
    with pytest.raises(BadInputError, match="NAME=VALUE"):
        d.write(tmp_path, arch="sm_90", needs=[("bf16", "rows=1,n_cols")])


def test_compile_only_stores_a_row_per_config_named_with_tritons_version(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("KTUNE_TRITON_DIR", str(folder.parent))
    db = tmp_path / "t.db"
    doc = rmsnorm.rmsnorm_rows.tune([{"rows": 64, "n_cols": 4096}], "bf16", db=db, compile_only=True)
    (key,) = doc["keys"]
    assert (key["kernel"], key["shape"], key["outcomes"]) == (KERNEL, "rows=64,n_cols=4096", {"skipped": 5})
    rows = sqlite3.connect(db).execute(
        "SELECT m.config_name, m.outcome, m.reason FROM measurements m JOIN kernels k ON k.id = m.kernel_id "
        "WHERE k.name = ? ORDER BY m.config_name", (KERNEL,)).fetchall()
    assert [r[0] for r in rows] == sorted(
        f"{KERNEL}.bf16.triton.{triton.__version__}.BLOCK=4096.w{w}.s1" for w in (1, 2, 4, 8, 16))
    assert {(r[1], r[2]) for r in rows} == {("skipped", "compile-only")}


class _FakeTensor:
    """Enough of a tensor for a key: a dtype and an element count."""

    def __init__(self, numel, dtype="torch.bfloat16"):
        self._numel, self.dtype = numel, dtype

    def numel(self):
        return self._numel


def test_a_miss_serves_the_default_config_and_records_the_key_once(tmp_path):
    misses = tmp_path / "misses.keys"
    k = kt.Autotuner(rmsnorm.rmsnorm_rows.fn, rmsnorm.rmsnorm_rows.description, key=["n_cols"],
                     dims={"rows": lambda a: a["x_ptr"].numel() // a["n_cols"]}, db=str(tmp_path / "empty.db"),
                     gpu="NVIDIA H200", record_misses=str(misses))
    args = {"x_ptr": _FakeTensor(24 * 3072), "w_ptr": _FakeTensor(3072), "y_ptr": _FakeTensor(24 * 3072),
            "n_cols": 3072, "eps": 1e-6}
    assert k.config_for(args) is rmsnorm.rmsnorm_rows.description.configs[0]
    assert k.config_for(args) is rmsnorm.rmsnorm_rows.description.configs[0]
    assert k.sources == {("rows=24,n_cols=3072", "bf16"): "default"}
    text = misses.read_text()
    assert text.startswith("# ") and text.count("\n") == 2
    assert kt.read_keys(str(misses)) == [("triton:rmsnorm:rmsnorm_rows", "rows=24,n_cols=3072", "bf16")]
    assert kernel_of("triton:rmsnorm:rmsnorm_rows") is rmsnorm.rmsnorm_rows


def test_bad_descriptions_are_bad_input():
    d = rmsnorm.rmsnorm_rows.description
    with pytest.raises(BadInputError, match="takes"):
        kt.Description(d.fn, d.configs, dims=d.dims, args={"x_ptr": d.args["x_ptr"]}, grid="rows", verify=False)
    with pytest.raises(BadInputError, match="lower-case"):
        kt.Description(d.fn, d.configs, dims=["Rows"], args=d.args, grid="rows", verify=False)
    with pytest.raises(BadInputError, match="reference"):
        kt.Description(d.fn, d.configs, dims=d.dims, args=d.args, grid="rows")
    with pytest.raises(BadInputError, match="neither"):
        kt.Autotuner(d.fn, d, key=["n_cols"])
    with pytest.raises(BadInputError, match="triton:MODULE:FUNCTION"):
        kernel_of("rmsnorm:rmsnorm_rows")
