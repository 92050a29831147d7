"""A Triton kernel described for ktune's harness: the same description a bring-your-own kernel
folder holds (docs/byo.md), written by Python instead of by hand. Its candidates are the kernel's
`triton.Config`s, each compiled ahead of time for the target architecture (compile.py) and listed
with its cubin, entry, threads, shared memory and scratch sizes in a `[prebuilt]` table; ktune's
worker then loads, verifies and times them like any candidate.

    d = Description(rmsnorm_rows, configs, dims=["rows", "n_cols"], dtypes=["bf16"],
                    args={"x_ptr": input_buffer("rows * n_cols"), ..., "eps": scalar(1e-6, "f32")},
                    grid="rows", reference=CudaReference(source, "rmsnorm_reference", "rows", 128))
    folder = d.write(cache_folder, arch="sm_90")      # NAME.toml, NAME.cubins/, NAME.cu

A folder is named after a hash of everything that makes its cubins (Triton's version, the
kernel's source, the configs, the argument types, the arch), so writing it again compiles nothing.
"""

import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Sequence, Union

from ..errors import BadInputError
from .compile import compile_config


@dataclass(frozen=True)
class Arg:
    """One argument of the kernel: a buffer (`input`, `output`) with its element count, or a scalar
    with its value; expressions of the dimensions and the config's parameters (docs/byo.md)."""
    kind: str
    expression: str  # buffers: element count; scalars: value
    type: str = "dtype"  # buffers: "dtype" (the problem's), "f32", "i32", ...; scalars: i32, i64, f32
    fill: Optional[Mapping[str, object]] = None


def input_buffer(elements, type="dtype", fill=None):
    """An input buffer of `elements` (an expression) values, filled with random values (or `fill`)."""
    return Arg("input", str(elements), type, fill)


def output_buffer(elements, type="dtype"):
    """An output buffer, poisoned before each run and compared with the reference's."""
    return Arg("output", str(elements), type)


def scalar(value, type="i32"):
    """A scalar argument: an expression (or number) and its type, i32, i64 or f32."""
    return Arg("scalar", str(value), type)


@dataclass(frozen=True)
class CudaReference:
    """A CUDA C++ reference: `source` holds `template <typename T> __global__ void function(...)`
    taking the kernel's arguments (outputs written to their own buffers); launched at grid x block."""
    source: str
    function: str
    grid: Union[str, Sequence[str]]
    block: Union[int, str, Sequence[Union[int, str]]] = 256
    tolerance: Mapping[str, object] = field(default_factory=dict)


_TRITON_TYPES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "i32": "i32", "i64": "i64", "u8": "u8",
                 "fp8e4m3": "fp8e4nv", "fp8e5m2": "fp8e5"}


def _identifier(text):
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def _toml(value):
    """A TOML value: strings, integers, floats, booleans, lists and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise BadInputError(f"cannot write {value!r} into a description")


class Description:
    """A `@triton.jit` kernel, its configs and its arguments as ktune describes a kernel."""

    def __init__(self, fn, configs, dims: Sequence[str], args: Mapping[str, Arg], grid, dtypes=("bf16",),
                 reference: Optional[CudaReference] = None, verify: bool = True, work=None, name=None):
        self.fn = fn
        self.configs = list(configs)
        if not self.configs:
            raise BadInputError("a Triton kernel needs at least one config")
        self.dims = list(dims)
        bad = [d for d in self.dims if not re.fullmatch(r"[a-z][a-z0-9_]*", d)]
        if bad:
            raise BadInputError(f"dimension name(s) {bad}: lower-case letters, digits and '_', as ktune's shapes "
                                "write them")
        self.args = dict(args)
        self.grid = grid
        self.dtypes = list(dtypes)
        self.reference = reference
        if reference is None and verify:
            raise BadInputError("give a reference (CudaReference), or verify=False to store every result "
                                "as unverified")
        self.work = dict(work or {})
        jit = getattr(fn, "fn", fn)
        self.module, self.function = jit.__module__, jit.__name__
        self.name = name or _identifier(f"triton_{self.module}_{self.function}")
        for c in self.configs:
            if getattr(c, "num_ctas", 1) not in (None, 1):
                raise BadInputError(f"config {c}: num_ctas > 1 (thread-block clusters) is not served yet")
        self.params = self._params()
        own = [n for n in fn.arg_names if n not in self.params]
        if list(self.args) != own:
            raise BadInputError(f"args name {list(self.args)}; {self.function} takes {own} (besides the "
                                f"configs' parameters {list(self.params)}), in that order")

    def _params(self):
        """Every config parameter (the constexprs the configs set, then num_warps and num_stages) and
        its values in the order the configs first use them."""
        names = list(self.configs[0].kwargs)
        for c in self.configs:
            if list(c.kwargs) != names:
                raise BadInputError(f"every config must set the same parameters: {names} vs {list(c.kwargs)}")
        params = {n: [] for n in names + ["num_warps", "num_stages"]}
        for c in self.configs:
            for n, v in self.point(c).items():
                if v not in params[n]:
                    params[n].append(v)
        return params

    @staticmethod
    def point(config):
        """A triton.Config as the description's parameter values."""
        out = {k: int(v) for k, v in config.kwargs.items()}
        out["num_warps"] = int(config.num_warps if config.num_warps is not None else 4)
        out["num_stages"] = int(config.num_stages if config.num_stages is not None else 3)
        return out

    def config_of(self, params: Mapping[str, int]):
        """The triton.Config whose parameter values are `params`, or None."""
        for c in self.configs:
            if self.point(c) == {k: int(v) for k, v in params.items()}:
                return c
        return None

    def signature(self, dtype):
        """Triton's signature of the kernel for problem dtype `dtype`."""
        sig = {}
        for n in self.fn.arg_names:
            if n in self.params:
                sig[n] = "constexpr"
                continue
            a = self.args[n]
            t = dtype if a.type == "dtype" else a.type
            if t not in _TRITON_TYPES:
                raise BadInputError(f"arg {n}: type {t!r} is not one of {sorted(_TRITON_TYPES)}")
            sig[n] = ("*" if a.kind != "scalar" else "") + _TRITON_TYPES[t]
        return sig

    def identity(self, arch):
        """A hash of everything its cubins depend on."""
        import triton
        parts = [triton.__version__, str(self.fn.cache_key), arch, self.name, json.dumps(self.dtypes),
                 json.dumps([self.point(c) for c in self.configs]),
                 json.dumps({n: [a.kind, a.expression, a.type, dict(a.fill or {})] for n, a in self.args.items()}),
                 json.dumps(self.grid), json.dumps(self.work), repr(self.reference),
                 json.dumps(self.specializations())]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def specializations(self):
        """(ones, aligned) of each cubin a (config, dtype) gets, most specialized first, as Triton's JIT
        specializes a call: integer scalars written as 1 are the constant 1 in every cubin; the first
        cubin takes every other integer scalar as a multiple of 16 (the usual shapes), the second none
        (any shape)."""
        ints = [n for n in self.fn.arg_names if n in self.args and self.args[n].kind == "scalar"
                and self.args[n].type in ("i32", "i64")]
        ones = [n for n in ints if self.args[n].expression.strip() == "1"]
        rest = [n for n in ints if n not in ones]
        return [(ones, rest), (ones, [])] if rest else [(ones, [])]

    def _compile_one(self, config, dtype, arch, ones=(), aligned=()):
        constexprs = {k: config.kwargs[k] for k in config.kwargs}
        p = self.point(config)
        return compile_config(self.fn, self.signature(dtype), constexprs, num_warps=p["num_warps"],
                              num_stages=p["num_stages"], arch=arch, ones=ones, aligned=aligned)

    def write(self, root, arch="sm_90", workers=None):
        """Writes (or finds) the description folder under `root` and returns its path. Every
        (config, dtype) is compiled by Triton ahead of time, `workers` at a time (default: one per
        core)."""
        folder = pathlib.Path(root) / f"{self.name}-{self.identity(arch)}"
        toml_path = folder / f"{self.name}.toml"
        if toml_path.is_file():
            return folder
        cubins = folder / f"{self.name}.cubins"
        cubins.mkdir(parents=True, exist_ok=True)
        variants = list(enumerate(self.specializations()))
        jobs = [(c, d, v) for c in self.configs for d in self.dtypes for v in variants]
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            compiled = list(pool.map(lambda job: self._compile_one(job[0], job[1], arch, *job[2][1]), jobs))
        entries = []
        for (config, dtype, (variant, (ones, aligned))), cc in zip(jobs, compiled):
            file = f"{cc.config_name}.{dtype}.v{variant}.cubin"
            # Whole files only: shards of a job array may write one folder on a shared file system at
            # once, and one may read a cubin while another writes the same one.
            tmp = cubins / f".{file}.{os.getpid()}.tmp"
            tmp.write_bytes(cc.cubin)
            os.replace(tmp, cubins / file)
            entries.append({"config": self.point(config), "dtype": dtype, "file": file, "entry": cc.name,
                            "threads": 32 * cc.num_warps, "shared": cc.shared_bytes,
                            "scratch": [cc.global_scratch_bytes, cc.profile_scratch_bytes],
                            "ones": list(ones), "aligned": list(aligned), "name": cc.config_name})
        if self.reference is not None:
            (folder / f"{self.name}.cu").write_text(self.reference.source)
        text = self.toml_text(entries, arch, compiled[0].triton_version)
        tmp = toml_path.with_suffix(f".toml.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, toml_path)  # the folder counts as written once its description is there
        return folder

    def toml_text(self, cubins, arch, triton_version):
        """The description (docs/byo.md) with its `[prebuilt]` table of `cubins`."""
        lines = [f"description = {_toml(f'Triton kernel {self.module}:{self.function}')}",
                 f"dims = {_toml(self.dims)}", f"dtypes = {_toml(self.dtypes)}"]
        if self.reference is None:
            lines.append("verify = false")
        lines += ["", "[[template]]", f"name = {_toml(self.function)}",
                  f"seeds = [{_toml(self.point(self.configs[0]))}]", "[template.params]"]
        lines += [f"{n} = {_toml(v)}" for n, v in self.params.items()]
        for n, a in self.args.items():
            lines += ["", "[[arg]]", f"name = {_toml(n)}", f"kind = {_toml(a.kind)}"]
            if a.kind == "scalar":
                lines += [f"type = {_toml(a.type)}", f"value = {_toml(a.expression)}"]
            else:
                lines += [f"type = {_toml(a.type)}", f"elements = {_toml(a.expression)}"]
                if a.fill:
                    lines.append(f"fill = {_toml(dict(a.fill))}")
        lines += ["", "[[launch]]", f"grid = {_toml(self.grid)}"]
        if self.reference is not None:
            r = self.reference
            lines += ["", "[reference]", f"function = {_toml(r.function)}", f"grid = {_toml(r.grid)}",
                      f"block = {_toml(r.block)}"]
            if r.tolerance:
                lines.append(f"tolerance = {_toml(dict(r.tolerance))}")
        if self.work:
            lines += ["", "[work]"] + [f"{k} = {_toml(v)}" for k, v in self.work.items()]
        lines += ["", "[prebuilt]", f"arch = {_toml(arch)}",
                  f"producer = {_toml(f'triton {triton_version}, source {str(self.fn.cache_key)[:16]}')}"]
        for c in cubins:
            lines += ["", "[[prebuilt.cubin]]"] + [f"{k} = {_toml(v)}" for k, v in c.items()]
        return "\n".join(lines) + "\n"
