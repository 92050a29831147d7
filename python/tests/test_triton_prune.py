"""`prune_configs_by` without a GPU: ktune keeps, for a key, exactly the configs Triton's own
autotuner keeps (early prune, then the perf model's top_k, int or fraction); a bad prune is bad
input; a key's kept configs are the only ones compiled, written as the key's `[[prune]]` entry in
the cubin index (outside the kernel's hash) and the only ones `ktune tune` enumerates; a miss
launches the first config the call's prune keeps; a recorded miss tuned offline is pruned too."""

import pathlib
import random
import sqlite3
import sys
import tomllib

import pytest

triton = pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")

from ktune import BadInputError  # noqa: E402
from ktune import triton as kt  # noqa: E402
from ktune.triton.offline import tune_file  # noqa: E402
from ktune.triton.prune import BufferStandIn, Pruner, key_arguments  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples" / "triton"))
import matmul  # noqa: E402
import pruned_scale  # noqa: E402
import rmsnorm  # noqa: E402

MATMUL = matmul.matmul_tiles.description
SCALE = pruned_scale.scale.description


def _points(configs):
    return [kt.Description.point(c) for c in configs]


def _tritons_choice(configs, prune_configs_by, named_args):
    """What triton.autotune's own tuner keeps for a call of `named_args`."""
    tuner = triton.autotune(configs, key=["M", "N", "K"], prune_configs_by=prune_configs_by)(matmul.matmul_tiles.fn)
    tuner.nargs = named_args
    return tuner.prune_configs({})


def test_ktune_keeps_what_tritons_autotuner_keeps():
    rng = random.Random()
    for _ in range(20):
        m, n, k = rng.randrange(1, 8192), rng.randrange(16, 8192), rng.randrange(16, 8192)
        limit = rng.choice([32, 64, 128, 256])
        weights = {name: rng.random() for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages")}

        def early(configs, named_args, **kwargs):
            small = [c for c in configs if c.kwargs["BLOCK_M"] <= max(limit, named_args["M"])]
            return small or configs[:1]

        def model(**a):
            # an estimate that reads the key, the buffers' stand-ins and the config alike
            tiles = -(-a["M"] // a["BLOCK_M"]) * -(-a["N"] // a["BLOCK_N"])
            return tiles * a["K"] * a["a_ptr"].element_size() / sum(weights[p] * a[p] for p in weights)

        prune = rng.choice([{"early_config_prune": early}, {"perf_model": model, "top_k": rng.randrange(1, 30)},
                            {"early_config_prune": early, "perf_model": model, "top_k": rng.choice([0.25, 0.5, 1.0])}])
        named = key_arguments(MATMUL, {"m": m, "n": n, "k": k}, "bf16")
        want = _points(_tritons_choice(MATMUL.configs, prune, named))
        got = _points(Pruner.of(prune).keep(MATMUL, named))
        assert got == want, (m, n, k, prune)
        assert 0 < len(got) <= len(MATMUL.configs)


def test_the_key_arguments_are_the_scalars_values_and_stand_ins_of_the_buffers():
    m, n, k = (random.randrange(1, 5000) for _ in range(3))
    a = key_arguments(MATMUL, {"m": m, "n": n, "k": k}, "f16")
    assert (a["M"], a["N"], a["K"], a["stride_am"], a["stride_bk"], a["stride_ak"]) == (m, n, k, k, n, 1)
    assert isinstance(a["a_ptr"], BufferStandIn) and a["a_ptr"].numel() == m * k and a["b_ptr"].shape == (k * n,)
    assert a["c_ptr"].element_size() == 2 and "f16" in repr(a["c_ptr"])
    rows = random.randrange(1, 100)
    r = key_arguments(rmsnorm.rmsnorm_rows.description, {"rows": rows, "n_cols": 4000}, "bf16")
    assert r["eps"] == pytest.approx(1e-6) and r["x_ptr"].numel() == rows * 4000


def test_a_bad_prune_is_bad_input():
    for bad, match in [({"top_k": 3, "early": len}, "unknown field"), ({"perf_model": 3}, "not callable"),
                       ({"perf_model": len, "top_k": 1.5}, "top_k"), ({"perf_model": len, "top_k": "2"}, "top_k"),
                       ([len], "must be a dict")]:
        with pytest.raises(BadInputError, match=match):
            Pruner.of(bad)
    named = key_arguments(MATMUL, {"m": 64, "n": 64, "k": 64}, "bf16")
    with pytest.raises(BadInputError, match="kept no config"):
        Pruner.of({"early_config_prune": lambda configs, named_args: []}).keep(MATMUL, named)
    with pytest.raises(BadInputError, match="kept no config"):
        Pruner.of({"perf_model": lambda **a: 1.0, "top_k": 0.01}).keep(MATMUL, named)
    stranger = triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 1}, num_warps=1, num_stages=1)
    with pytest.raises(BadInputError, match="not one of configs="):
        Pruner.of({"early_config_prune": lambda configs, named_args: [stranger]}).keep(MATMUL, named)


def _index(folder):
    return tomllib.loads((folder / f"{SCALE.name}.cubins" / "index.toml").read_text())


def _kept_points(n):
    fit = triton.next_power_of_2(n)
    blocks = [b for b in pruned_scale.BLOCKS if b <= fit] or [min(pruned_scale.BLOCKS)]
    return [{"BLOCK": b, "num_warps": w, "num_stages": 1} for b in blocks for w in pruned_scale.WARPS]


def _outcomes(doc):
    (key,) = doc["keys"]
    return sum(key["outcomes"].values())


def test_a_key_compiles_and_tunes_only_what_its_prune_keeps(tmp_path):
    root, db = tmp_path / "folders", tmp_path / "t.db"
    small = random.randrange(257, 512)  # keeps BLOCK 128 and 512
    doc = pruned_scale.scale.tune([{"n": small}], "bf16", db=db, compile_only=True, root=root)
    assert _outcomes(doc) == len(_kept_points(small)) == 4
    (folder,) = root.iterdir()
    index = _index(folder)
    assert index["prune"] == [{"dtype": "bf16", "shape": {"n": small}, "keep": _kept_points(small)}]
    assert sorted((c["config"]["BLOCK"], c["config"]["num_warps"]) for c in index["cubin"]) == sorted(
        (p["BLOCK"], p["num_warps"]) for p in _kept_points(small))  # nothing else compiled
    toml_text = (folder / f"{SCALE.name}.toml").read_text()
    big = random.randrange(4096, 1 << 20)  # keeps all six
    doc = pruned_scale.scale.tune([{"n": big}], "bf16", db=db, compile_only=True, root=root)
    assert _outcomes(doc) == 6 and list(root.iterdir()) == [folder]
    assert (folder / f"{SCALE.name}.toml").read_text() == toml_text  # the kernel's hash stays
    keys = {(e["dtype"], e["shape"]["n"]): len(e["keep"]) for e in _index(folder)["prune"]}
    assert keys == {("bf16", small): 4, ("bf16", big): 6}
    names = sqlite3.connect(db).execute("SELECT config_name FROM measurements WHERE shape = ?",
                                        (f"n={small}",)).fetchall()
    assert len(names) == 4 and not any("BLOCK=2048" in n for (n,) in names)


def test_a_key_whose_prune_changed_is_pruned_anew(tmp_path):
    root = tmp_path / "folders"
    n = random.randrange(4096, 1 << 16)
    folder = SCALE.write(root, needs=[("f16", f"n={n}")], kept={("f16", f"n={n}"): SCALE.configs[:1]})
    assert [len(e["keep"]) for e in _index(folder)["prune"]] == [1]
    # the key spelled another way is the same key
    SCALE.write(root, needs=[("f16", f"n={n}")], kept={("f16", f" n = {n}"): SCALE.configs[2:5]})
    (entry,) = _index(folder)["prune"]
    assert entry["keep"] == _points(SCALE.configs[2:5]) and entry["shape"] == {"n": n}
    with pytest.raises(BadInputError, match="not one of its dtypes"):
        SCALE.write(root, needs=[], kept={("f32", f"n={n}"): SCALE.configs[:1]})


class _Buffer:
    def __init__(self, numel, dtype="torch.float16"):
        self._numel, self.dtype = numel, dtype

    def numel(self):
        return self._numel


def test_a_miss_launches_the_first_config_the_calls_prune_keeps(tmp_path):
    misses = tmp_path / "misses.keys"
    k = kt.Autotuner(pruned_scale.scale.fn, SCALE, key=["n"], db=str(tmp_path / "none.db"), record_misses=str(misses))
    seen = []
    SCALE.pruner = Pruner.of({"early_config_prune": lambda configs, named_args, **kw: (
        seen.append((dict(named_args), kw)), pruned_scale.blocks_that_fit(configs, named_args))[1]})
    try:
        n = random.randrange(600, 2000)  # keeps BLOCK 128 and 512 (and 2048 past 1024): first BLOCK 128, 1 warp
        x, y = _Buffer(n), _Buffer(n)
        assert k.config_for({"x_ptr": x, "y_ptr": y, "n": n}) is SCALE.configs[0]
        (named, kwargs), = seen
        assert named["x_ptr"] is x and named["n"] == n and kwargs == {}, "the prune sees the call's own arguments"
        SCALE.pruner = Pruner.of({"perf_model": lambda **a: -a["BLOCK"] * a["num_warps"], "top_k": 2})
        k.cache.clear()
        assert kt.Description.point(k.config_for({"x_ptr": x, "y_ptr": y, "n": n})) == {
            "BLOCK": 2048, "num_warps": 4, "num_stages": 1}
    finally:
        SCALE.pruner = Pruner.of({"early_config_prune": pruned_scale.blocks_that_fit})
    assert kt.read_keys(str(misses)) == [("triton:pruned_scale:scale", f"n={n}", "f16")]


def test_a_recorded_miss_is_pruned_when_tuned_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("KTUNE_TRITON_DIR", str(tmp_path / "folders"))
    monkeypatch.setenv("KTUNE_NO_PROGRESS", "1")
    n = random.randrange(129, 512)
    keys = tmp_path / "misses.keys"
    keys.write_text(f"triton:pruned_scale:scale n={n} bf16\n")
    doc = tune_file(str(keys), db=tmp_path / "t.db", compile_only=True)
    assert _outcomes(doc) == len(_kept_points(n))
