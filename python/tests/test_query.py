"""ktune.query against a database written by the C ABI's fixture (random configs, seeded)."""

import subprocess
import sys

import pytest

import ktune


def test_exact_key_answers_the_stored_config(db, expected):
    got = ktune.query("gemm", expected["exact_shape"], "bf16", gpu=expected["gpu"], db=db)
    assert got["config_name"] == expected["exact_config"]
    assert got["fallback"] is False
    assert got["gpu"] == expected["gpu"]


class _TorchLikeDtype:
    """What str() of torch.bfloat16 gives, without importing torch."""

    def __str__(self):
        return "torch.bfloat16"


def test_a_dtype_is_named_as_ktune_torch_or_in_full(db, expected):
    want = expected["exact_config"]
    for dtype in ("bf16", "bfloat16", "BFloat16", _TorchLikeDtype()):
        assert ktune.query("gemm", expected["exact_shape"], dtype, gpu=expected["gpu"], db=db)["config_name"] == want
    with pytest.raises(ktune.BadInputError) as e:
        ktune.query("gemm", expected["exact_shape"], "bfloat17", gpu=expected["gpu"], db=db)
    assert "bfloat17" in str(e.value) and "bf16" in str(e.value)


def test_shape_as_a_dict_and_reordered_dimensions_find_the_same_key(db, expected):
    dims = dict(kv.split("=") for kv in expected["reordered_shape"].split(","))
    assert ktune.query("gemm", dims, "bf16", gpu=expected["gpu"], db=db)["config_name"] == expected["exact_config"]
    assert ktune.query("gemm", expected["reordered_shape"], "bf16", gpu=expected["gpu"], db=db)["config_name"] == expected["exact_config"]


def test_layout_is_part_of_the_key(db, expected):
    assert ktune.query("gemm", expected["exact_shape"], "bf16", layout="nn", gpu=expected["gpu"], db=db)["config_name"] == \
        expected["nn_config"]


def test_untuned_shape_falls_back_and_says_so(db, expected):
    got = ktune.query("gemm", expected["fallback_shape"], "bf16", gpu=expected["gpu"], db=db)
    assert got["fallback"] is True
    assert got["tuned_shape"] == expected["exact_shape"]
    with pytest.raises(ktune.NotFoundError) as e:
        ktune.query("gemm", expected["fallback_shape"], "bf16", gpu=expected["gpu"], db=db, fallback=False)
    assert e.value.code == 4 and "fallback disabled" in str(e.value)


def test_a_gpu_the_database_does_not_hold_is_not_found_and_the_error_lists_the_ones_it_holds(db, expected):
    short = expected["gpu"].split()[-1]  # e.g. "H200" for "NVIDIA H200"
    with pytest.raises(ktune.NotFoundError) as e:
        ktune.query("gemm", expected["exact_shape"], "bf16", gpu=short + " no such", db=db)
    assert e.value.code == 4
    assert "holds no such GPU" in str(e.value) and f"'{expected['gpu']}'" in str(e.value), str(e.value)


def test_bad_input_is_a_value_error_with_exit_code_2(db):
    with pytest.raises(ktune.BadInputError) as e:
        ktune.query("gemm", "m=16,n=4096,k=4096", "int3", db=db)
    assert isinstance(e.value, ValueError) and e.value.code == 2 and "int3" in str(e.value)
    with pytest.raises(ktune.BadInputError):
        ktune.query("no_such_kernel", "m=1", "bf16", db=db)
    with pytest.raises(ktune.BadInputError):
        ktune.query("gemm", 16, "bf16", db=db)


def test_missing_database_is_not_found(tmp_path):
    with pytest.raises(ktune.NotFoundError) as e:
        ktune.query("gemm", "m=16,n=4096,k=4096", "bf16", db=str(tmp_path / "none.db"))
    assert "none.db" in str(e.value)


def test_importing_ktune_does_not_import_torch():
    code = "import sys, ktune; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(ktune.__file__).parents[1]))
    assert out.stdout.strip() == "False"
