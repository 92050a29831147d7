"""ktune.triton without a GPU: every config of the example Triton kernels (examples/triton: a
tutorial-style RMSNorm and a 24-config matmul) compiles ahead of time for sm_90 into a cubin with
the launch metadata ktune's worker needs, the parameter list read from the PTX entry (the kernel's
own arguments, then the two scratch pointers Triton 3.6 appends), names that carry Triton's
version, and the key a winner is stored under."""

import pathlib
import sys

import pytest

triton = pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")

from ktune import BadInputError  # noqa: E402
from ktune import triton as kt  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "triton"))
import matmul  # noqa: E402
import rmsnorm  # noqa: E402

# The examples' kernels are ktune.triton.autotune kernels; .fn is the @triton.jit function.
EXAMPLES = [(rmsnorm.rmsnorm_rows.fn, rmsnorm.signature(), rmsnorm.configs(4096)),
            (matmul.matmul_tiles.fn, matmul.signature(), matmul.configs())]


@pytest.mark.parametrize("fn, signature, configs", EXAMPLES, ids=["rmsnorm", "matmul"])
def test_every_example_config_compiles_for_sm90_without_a_gpu(fn, signature, configs):
    assert len(configs) == (24 if fn is matmul.matmul_tiles.fn else 5)
    own_args = [n for n, t in signature.items() if t != "constexpr"]
    names = set()
    for constexprs, warps, stages in configs:
        c = kt.compile_config(fn, signature, constexprs, num_warps=warps, num_stages=stages, arch="sm_90")
        assert c.cubin[:4] == b"\x7fELF" and len(c.cubin) > 1000
        assert c.name == fn.__name__ and c.arch == "sm_90"
        assert (c.num_warps, c.num_stages, c.num_ctas) == (warps, stages, 1)
        assert c.params == tuple(f"{c.name}_param_{i}" for i in range(len(own_args) + 2))
        assert c.global_scratch_bytes >= 0 and c.profile_scratch_bytes >= 0 and c.shared_bytes >= 0
        assert c.triton_version == triton.__version__
        assert c.config_name.startswith(f"triton.{triton.__version__}.") and f".w{warps}.s{stages}" in c.config_name
        names.add(c.config_name)
    assert len(names) == len(configs), "every config has its own name"


def test_a_config_compiles_as_tritons_jit_specializes_the_call():
    """Strides equal to 1 become constants (they leave the kernel's parameters) and integers known to
    be multiples of 16 let Triton vectorize: without them the cubin is another, slower kernel than the
    one Triton's JIT launches for the same config."""
    (constexprs, warps, stages) = matmul.configs()[4]
    fn, sig = matmul.matmul_tiles.fn, matmul.signature()
    d = matmul.matmul_tiles.description
    (ones, aligned), (ones_any, none) = d.specializations()
    assert ones == ones_any == ["stride_ak", "stride_bn", "stride_cn"] and none == []
    assert aligned == ["M", "N", "K", "stride_am", "stride_bk", "stride_cm"]
    plain = kt.compile_config(fn, sig, constexprs, num_warps=warps, num_stages=stages, arch="sm_90")
    general = kt.compile_config(fn, sig, constexprs, num_warps=warps, num_stages=stages, arch="sm_90", ones=ones)
    fast = kt.compile_config(fn, sig, constexprs, num_warps=warps, num_stages=stages, arch="sm_90", ones=ones,
                             aligned=aligned)
    assert len(plain.params) == 12 + 2 and len(general.params) == len(fast.params) == 12 - 3 + 2
    assert len({plain.cubin, general.cubin, fast.cubin}) == 3
    assert fast.config_name == general.config_name == plain.config_name  # one config, one name


def test_bad_requests_are_bad_input():
    sig, (constexprs, warps, stages) = rmsnorm.signature(), rmsnorm.configs(1024)[0]
    with pytest.raises(BadInputError, match="sm_XY"):
        kt.compile_config(rmsnorm.rmsnorm_rows.fn, sig, constexprs, warps, stages, arch="hopper")
    with pytest.raises(BadInputError, match="takes"):
        kt.compile_config(rmsnorm.rmsnorm_rows.fn, {**sig, "extra": "i32"}, constexprs, warps, stages)
    with pytest.raises(BadInputError, match="BLOCK"):
        kt.compile_config(rmsnorm.rmsnorm_rows.fn, sig, {}, warps, stages)


def test_the_key_names_the_importable_function_its_source_and_the_key_values():
    key = kt.kernel_key(matmul.matmul_tiles.fn, {"M": 16, "N": 4096, "K": 4096}, "bf16")
    assert key == {"kernel": "triton:matmul:matmul_tiles", "source_hash": key["source_hash"],
                   "shape": "M=16,N=4096,K=4096", "dtype": "bf16"}
    assert len(key["source_hash"]) == 16
    assert kt.kernel_key(rmsnorm.rmsnorm_rows.fn, {"n_cols": 4096}, "bf16")["source_hash"] != key["source_hash"]
    with pytest.raises(BadInputError, match="triton.jit"):
        kt.kernel_key(len, {"n": 1}, "bf16")
