"""`python -m ktune.triton tune FILE` without a GPU (--compile-only): a key file's Triton lines
renamed line for line for `ktune tune --shapes`, the others kept; a miss recorded by autotune tuned
from the file; the keys of a file split by `--shard I/N` (and `--shard auto` in a Slurm array task)
into shards that cover every key once, whose databases `ktune cache merge` joins; ktune's messages
naming the key file, its exit code kept."""

import os
import pathlib
import random
import sqlite3
import subprocess
import sys

import pytest

triton = pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")

import ktune  # noqa: E402
from ktune import triton as kt  # noqa: E402
from ktune._executable import ktune_executable  # noqa: E402
from ktune.triton.offline import translate, tune_file  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "triton"))
import rmsnorm  # noqa: E402

KERNEL = rmsnorm.rmsnorm_rows.description.name
# One config a key keeps each compile-only run short; the shard rule is the same for any cost.
FEW = ["--strategy", "exhaustive", "--budget", "1", "--compile-threads", "2"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("folders")
    rmsnorm.rmsnorm_rows.description.write(root, arch="sm_90")
    return root


@pytest.fixture
def env(folders, monkeypatch):
    monkeypatch.setenv("KTUNE_TRITON_DIR", str(folders))
    monkeypatch.setenv("KTUNE_NO_PROGRESS", "1")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT / "examples" / "triton")])}


def keys_in(db):
    with sqlite3.connect(db) as c:
        return set(c.execute("SELECT DISTINCT k.name, m.shape, m.dtype FROM measurements m "
                             "JOIN kernels k ON k.id = m.kernel_id").fetchall())


def test_triton_lines_are_renamed_line_for_line(folders, tmp_path):
    src = tmp_path / "keys"
    src.write_text("# recorded\n\ntriton:rmsnorm:rmsnorm_rows rows=3,n_cols=4096 bf16\n"
                   "gemm m=16,n=4096,k=4096 bf16 nn\ntriton:rmsnorm:rmsnorm_rows rows=9,n_cols=512 f16  # again\n")
    out = tmp_path / "out"
    (folder,) = translate(str(src), str(out), root=folders)
    assert folder.parent == folders and (folder / f"{KERNEL}.toml").is_file()
    assert out.read_text().split("\n") == ["", "", f"{KERNEL} rows=3,n_cols=4096 bf16", "gemm m=16,n=4096,k=4096 bf16 nn",
                                           f"{KERNEL} rows=9,n_cols=512 f16", ""]
    src.write_text("gemm m=16,n=4096,k=4096 bf16\ntriton:rmsnorm:rmsnorm_rows rows=3,n_cols=4096 bf16 nt\n")
    with pytest.raises(ktune.BadInputError, match=r"keys:2: .*no layout"):
        translate(str(src), str(out), root=folders)
    src.write_text("triton:no_such_module_here:f rows=3 bf16\n")
    with pytest.raises(ktune.BadInputError, match=r"keys:1: .*cannot import module 'no_such_module_here'.*PYTHONPATH"):
        translate(str(src), str(out), root=folders)
    src.write_text("triton:rmsnorm:rmsnorm rows=3 bf16\n")
    with pytest.raises(ktune.BadInputError, match="not a ktune.triton.autotune kernel"):
        translate(str(src), str(out), root=folders)


def test_a_recorded_miss_is_tuned_from_the_file(env, tmp_path):
    misses = tmp_path / "misses.keys"
    k = kt.Autotuner(rmsnorm.rmsnorm_rows.fn, rmsnorm.rmsnorm_rows.description, key=["n_cols"],
                     dims={"rows": lambda a: a["rows"]}, db=str(tmp_path / "none.db"), record_misses=str(misses))
    x = type("T", (), {"dtype": "torch.float16"})()
    rows, n_cols = random.randrange(1, 1000), random.randrange(1, 4097)
    k.config_for({"x_ptr": x, "w_ptr": x, "y_ptr": x, "n_cols": n_cols, "eps": 1e-6, "rows": rows})
    db = tmp_path / "tuned.db"
    doc = tune_file(str(misses), db=db, compile_only=True)
    (key,) = doc["keys"]
    assert (key["kernel"], key["shape"], key["dtype"]) == (KERNEL, f"rows={rows},n_cols={n_cols}", "f16")
    assert key["outcomes"] == {"skipped": len(rmsnorm.rmsnorm_rows.description.configs)}
    assert keys_in(db) == {(KERNEL, f"rows={rows},n_cols={n_cols}", "f16")}


def test_ktunes_errors_name_the_key_file_and_keep_the_exit_code(env, tmp_path):
    src = tmp_path / "bad.keys"
    src.write_text("triton:rmsnorm:rmsnorm_rows rows=3,n_cols=4096 bf16\ngemm m=16 bf16\n")
    with pytest.raises(ktune.BadInputError) as e:
        tune_file(str(src), db=tmp_path / "x.db", compile_only=True)
    assert e.value.code == 2 and f"{src}:2:" in str(e.value), str(e.value)
    done = subprocess.run([sys.executable, "-m", "ktune.triton", "tune", str(src), "--compile-only"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and f"{src}:2:" in done.stderr, done.stderr


def _tune(env, file, db, *more, extra_env=None):
    done = subprocess.run([sys.executable, "-m", "ktune.triton", "tune", str(file), "--compile-only", "--db", str(db),
                           *more, *FEW], env={**env, **(extra_env or {})}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return keys_in(db)


def test_shards_cover_every_key_once_and_merge(env, tmp_path):
    rng = random.Random()
    triton_keys = {(KERNEL, f"rows={rng.randrange(1, 1 << 16)},n_cols={rng.randrange(1, 4097)}",
                    rng.choice(["bf16", "f16"])) for _ in range(7)}
    builtin = ("rmsnorm", "rows=7,hidden=4095", "f16")  # a key of ktune's own kernels, in the same file
    file = tmp_path / "fleet.keys"
    file.write_text("# ktune.torch's and ktune.triton's misses\n" + "".join(
        f"triton:rmsnorm:rmsnorm_rows {s} {d}\n" for _, s, d in sorted(triton_keys)) + " ".join(builtin) + "\n")
    want = triton_keys | {builtin}
    shards = [_tune(env, file, tmp_path / f"shard{i}.db", "--shard", f"{i}/3") for i in range(3)]
    assert sum(len(s) for s in shards) == len(want) and set().union(*shards) == want, shards
    assert all(shards), "8 keys over 3 shards: none empty"
    again = _tune(env, file, tmp_path / "again1.db", "--shard", "1/3")
    assert again == shards[1], "the same split on every run"
    slurm = {"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3"}
    assert _tune(env, file, tmp_path / "auto.db", "--shard", "auto", extra_env=slurm) == shards[1]
    merged = tmp_path / "all.db"
    done = subprocess.run([ktune_executable(), "cache", "merge", "--db", str(merged)] +
                          [str(tmp_path / f"shard{i}.db") for i in range(3)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert keys_in(merged) == want
