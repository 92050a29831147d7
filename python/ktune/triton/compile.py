"""Triton kernels for ktune: each config of a `@triton.jit` kernel compiled ahead of time for a
target architecture, without a GPU or a driver, into what ktune's worker loads and times like any
candidate (a cubin and its launch metadata), named and keyed the way ktune's database stores
winners.

    from ktune import triton as kt
    cfg = kt.compile_config(rmsnorm_kernel, signature={"x": "*bf16", ..., "n": "i32"},
                            constexprs={"BLOCK": 4096}, num_warps=8, num_stages=1, arch="sm_90")
    cfg.cubin, cfg.name, cfg.shared_bytes, cfg.params   # what a launch needs

Triton 3.6's kernels take their non-constexpr arguments in order and then two pointers it appends
(global scratch, profile scratch; null when their sizes are 0): `params` lists them all, read from
the PTX entry, so a launcher never guesses. The database name of a config carries Triton's version:
a new Triton makes stored winners stale, as a changed template does for ktune's own kernels.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Sequence

from ..errors import BadInputError

_ARCH = re.compile(r"^sm_(\d+)a?$")


@dataclass(frozen=True)
class CompiledConfig:
    name: str  # the kernel's entry in the cubin
    cubin: bytes
    arch: str  # "sm_90"
    num_warps: int
    num_stages: int
    num_ctas: int  # the thread-block cluster's size (1: no cluster)
    shared_bytes: int  # dynamic shared memory a launch passes
    global_scratch_bytes: int  # per program; 0: the appended pointer may be null
    profile_scratch_bytes: int
    params: Sequence[str] = field(default_factory=tuple)  # the PTX entry's parameter names, in order
    triton_version: str = ""
    config_name: str = ""  # e.g. "triton.3.6.0.BLOCK=4096.w8.s1"


def _arch_number(arch):
    m = _ARCH.match(str(arch))
    if not m:
        raise BadInputError(f"arch {arch!r} is not an sm_XY architecture (e.g. sm_90)")
    return int(m.group(1))


def _entry_params(ptx, name):
    """The parameter names of `.entry name(...)` in PTX text."""
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        raise BadInputError(f"the PTX of {name} has no .entry {name}")
    return tuple(re.findall(r"\b(" + re.escape(name) + r"_param_\d+)\b", m.group(1)))


def config_name(constexprs: Mapping[str, object], num_warps: int, num_stages: int, num_ctas: int = 1,
                version: Optional[str] = None) -> str:
    """The name a config is stored under: Triton's version, the constexpr values in their order, the
    launch options; e.g. "triton.3.6.0.BLOCK_M=128.BLOCK_N=64.w4.s3"."""
    import triton
    parts = [f"triton.{version or triton.__version__}"]
    parts += [f"{k}={v}" for k, v in constexprs.items()]
    parts += [f"w{num_warps}", f"s{num_stages}"] + ([f"c{num_ctas}"] if num_ctas != 1 else [])
    return ".".join(parts)


def compile_config(fn, signature: Dict[str, str], constexprs: Mapping[str, object], num_warps: int = 4,
                   num_stages: int = 3, num_ctas: int = 1, arch: str = "sm_90", ones: Sequence[str] = (),
                   aligned: Sequence[str] = ()) -> CompiledConfig:
    """One config of `fn` (a `@triton.jit` function) compiled for `arch` with Triton's own compiler,
    no GPU needed. `signature` gives every argument's type as Triton spells it ("*bf16", "i32",
    "fp32", "constexpr"); `constexprs` the values of the constexpr ones. BadInputError for an
    architecture that is not sm_XY or a signature that does not name the function's arguments.

    Compiled as Triton's JIT compiles a call whose pointers are 16-byte aligned (ktune's buffers and
    torch's are), whose integer arguments named in `ones` are 1 (they become constants and leave the
    kernel's parameters) and whose integer arguments in `aligned` are multiples of 16: without these
    facts Triton cannot vectorize a load, and a config timed without them is not the kernel a call
    runs."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("cuda", _arch_number(arch), 32)
    names = list(getattr(fn, "arg_names", []))
    if names and set(signature) != set(names):
        raise BadInputError(f"signature names {sorted(signature)}; {getattr(fn, '__name__', fn)} takes {names}")
    missing = [k for k, t in signature.items() if t == "constexpr" and k not in constexprs]
    if missing:
        raise BadInputError(f"constexpr argument(s) {missing} have no value in constexprs")
    order = names or list(signature)
    sig, consts = dict(signature), dict(constexprs)
    for n in ones:
        sig[n], consts[n] = "constexpr", 1
    attrs = {(order.index(n),): [["tt.divisibility", 16]] for n, t in signature.items()
             if (t.startswith("*") or n in aligned) and n not in ones}
    src = ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    k = triton.compile(src, target=target, options={"num_warps": num_warps, "num_stages": num_stages,
                                                    "num_ctas": num_ctas})
    md = k.metadata
    return CompiledConfig(
        name=md.name, cubin=bytes(k.asm["cubin"]), arch=f"sm_{target.arch}", num_warps=md.num_warps,
        num_stages=md.num_stages, num_ctas=md.num_ctas, shared_bytes=md.shared,
        global_scratch_bytes=md.global_scratch_size, profile_scratch_bytes=md.profile_scratch_size,
        params=_entry_params(k.asm["ptx"], md.name), triton_version=md.triton_version,
        config_name=config_name({k2: constexprs[k2] for k2 in signature if k2 in constexprs}, md.num_warps,
                                md.num_stages, md.num_ctas, md.triton_version))


def kernel_key(fn, key_values: Mapping[str, object], dtype: str) -> Dict[str, str]:
    """What a Triton kernel's tuned config is keyed on in ktune's database: the kernel (its module
    and name, so another process can import it, plus a hash of its source and what it calls), the
    key arguments' values as a shape text, and the dtype."""
    module = getattr(getattr(fn, "fn", fn), "__module__", "?")
    name = getattr(getattr(fn, "fn", fn), "__name__", "?")
    source_hash = str(getattr(fn, "cache_key", ""))[:16]
    if not source_hash:
        raise BadInputError(f"{name} is not a @triton.jit function (it has no cache_key)")
    shape = ",".join(f"{k}={int(v)}" for k, v in key_values.items())
    return {"kernel": f"triton:{module}:{name}", "source_hash": source_hash, "shape": shape, "dtype": dtype}
