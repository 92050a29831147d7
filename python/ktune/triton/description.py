"""A Triton kernel described for ktune's harness: the same description a bring-your-own kernel
folder holds (docs/byo.md), written by Python instead of by hand. Its candidates are the kernel's
`triton.Config`s, each compiled ahead of time for the target architecture (compile.py) and listed
with its cubin, entry, threads, shared memory and scratch sizes in the folder's cubin index
(NAME.cubins/index.toml, outside the kernel's hash); ktune's worker then loads, verifies and times
them like any candidate.

    d = Description(rmsnorm_rows, configs, dims=["rows", "n_cols"], dtypes=["bf16"],
                    args={"x_ptr": input_buffer("rows * n_cols"), ..., "eps": scalar(1e-6, "f32")},
                    grid="rows", reference=CudaReference(source, "rmsnorm_reference", "rows", 128))
    folder = d.write(cache_folder, arch="sm_90", needs=[("bf16", "rows=64,n_cols=4096")])
    # NAME.toml, NAME.cu, NAME.cubins/ with the bf16 cubins that shape runs, and their index

A folder is named after a hash of everything that makes its cubins (Triton's version, the
kernel's source, the configs, the argument types, the arch); a write compiles only the cubins it
needs that the folder does not hold yet.
"""

import ast
import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence, Union

from ..errors import BadInputError
from . import cubin_index
from .compile import compile_config, config_name
from .reference_data import TorchReference, folder_name, write_data
from .toml_value import toml_value as _toml


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


def _evaluate(expression, values):
    """An integer expression of dimensions (`values`) and integers, with + - * and parentheses; None
    for anything else."""

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in values:
            return int(values[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = value(node.operand)
            return None if v is None else -v
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = value(node.left), value(node.right)
            if a is None or b is None:
                return None
            return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
        return None

    try:
        return value(ast.parse(str(expression), mode="eval").body)
    except SyntaxError:
        return None


def _shape_values(text):
    """ "m=512,n=4096" as {"m": 512, "n": 4096}."""
    try:
        return {k.strip(): int(v) for k, v in (part.split("=") for part in text.split(",") if part.strip())}
    except ValueError:
        raise BadInputError(f"shape {text!r} is not NAME=VALUE,... with integer values") from None


class CubinWrite:
    """Cubins of a description folder being compiled (Description.start_write)."""

    def __init__(self, folder, cubins, pool, futures, order, announce):
        self.folder = folder
        self._cubins, self._pool, self._futures = cubins, pool, futures
        self._order, self._announce = order, announce
        self._failures = None

    def finish(self):
        """Waits for every compile and lists each cubin in the index as soon as it is done (with
        `announce`, a failed one as failed, its error's first 2,000 characters saying why). Returns
        [(cubin file, exception)] of the compiles that failed; a second call returns them again."""
        if self._failures is not None:
            return self._failures
        failures = []
        try:
            for future in concurrent.futures.as_completed(self._futures):
                pending, variant = self._futures[future]
                base = {k: v for k, v in pending.items() if k != "pending"}
                try:
                    cc = future.result()
                except Exception as e:  # Triton's compile errors have no one type
                    failures.append((pending["file"], e))
                    if self._announce:
                        why = f"{type(e).__name__}: {e}"[:2000] or type(e).__name__
                        cubin_index.update(self._cubins, [{**base, "failed": why}], order=self._order)
                    continue
                file = f"{cc.config_name}.{pending['dtype']}.v{variant}.cubin"
                cubin_index.replace_file(self._cubins / file, cc.cubin)
                entry = {"config": base["config"], "dtype": base["dtype"], "file": file, "entry": cc.name,
                         "threads": 32 * cc.num_warps, "shared": cc.shared_bytes,
                         "scratch": [cc.global_scratch_bytes, cc.profile_scratch_bytes],
                         "ones": base["ones"], "aligned": base["aligned"], "name": cc.config_name}
                cubin_index.update(self._cubins, [entry], order=self._order)
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._failures = failures
        return failures

    def wait(self):
        """finish(), raising the first failed compile's error (after the others are listed); returns
        the folder."""
        for _, error in self.finish()[:1]:
            raise error
        return self.folder


class Description:
    """A `@triton.jit` kernel, its configs and its arguments as ktune describes a kernel."""

    def __init__(self, fn, configs, dims: Sequence[str], args: Mapping[str, Arg], grid, dtypes=("bf16",),
                 reference: Optional[Union[CudaReference, TorchReference]] = None, verify: bool = True, work=None,
                 name=None):
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
            raise BadInputError("give a reference (CudaReference or TorchReference), or verify=False to store every "
                                "result as unverified")
        if reference is not None and not isinstance(reference, (CudaReference, TorchReference)):
            raise BadInputError(f"reference={reference!r}: a CudaReference or a TorchReference")
        self.work = dict(work or {})
        self.pruner = None  # prune_configs_by (prune.Pruner): which configs a key tunes; not in the hash
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

    def shape_of(self, values):
        """Dimension `values` (a dict or a shape text) as a shape text in the description's order."""
        if isinstance(values, str):
            values = _shape_values(values)
        missing = [d for d in self.dims if d not in values]
        if missing:
            raise BadInputError(f"{self.name}: no value for dimension(s) {missing}")
        return ",".join(f"{d}={int(values[d])}" for d in self.dims)

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
                 json.dumps(self.grid), json.dumps(self.work), self._reference_identity(),
                 json.dumps(self.specializations()), "cubin index"]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def _reference_identity(self):
        if isinstance(self.reference, TorchReference):
            return f"{self.reference.producer()} {json.dumps(dict(self.reference.tolerance), sort_keys=True)}"
        return repr(self.reference)

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

    def needed_specializations(self, values):
        """The indices into specializations() that a problem of dimension `values` (a dict) runs: the
        first whose `aligned` args are multiples of 16 there, as ktune's worker picks; all of them when
        `values` is None or an arg's value is more than this reads (sums, differences and products of
        dimensions and integers)."""
        specs = self.specializations()
        if values is not None:
            for i, (_, aligned) in enumerate(specs):
                vals = [_evaluate(self.args[n].expression, values) for n in aligned]
                if any(v is None for v in vals):
                    break
                if all(v % 16 == 0 for v in vals):
                    return [i]
        return list(range(len(specs)))

    def _compile_one(self, config, dtype, arch, ones=(), aligned=()):
        constexprs = {k: config.kwargs[k] for k in config.kwargs}
        p = self.point(config)
        return compile_config(self.fn, self.signature(dtype), constexprs, num_warps=p["num_warps"],
                              num_stages=p["num_stages"], arch=arch, ones=ones, aligned=aligned)

    def write(self, root, arch="sm_90", workers=None, needs=None, kept=None, data=False, inputs=None):
        """Writes (or finds) the description folder under `root`, compiles the cubins `needs` asks for
        that it does not hold yet, and returns its path. `needs`: (dtype, dimension values) pairs, the
        values a dict or a shape text ("m=512,n=4096"), each asking for every config's cubin of that
        dtype and of the specialization those values run (needed_specializations); None asks for
        every dtype and specialization. `kept`: {(dtype, shape text): configs} of keys that tune only
        some configs (prune.py): a need of such a key asks for those configs' cubins only, and each
        is written as a `[[prune]]` entry (replacing the key's old one) that `ktune tune` obeys.
        `data`: with a TorchReference, also compute and save each need's inputs and expected outputs
        (reference_data.py; `inputs`, a call's tensors by name, as the inputs when they fit).
        Cubins are compiled by Triton ahead of time, `workers` at a time (default: one per core), and
        listed in NAME.cubins/index.toml (cubin_index.py), which is not part of the kernel's hash:
        adding cubins or prune entries later leaves stored winners current. The first compile that
        fails raises its error, after the others are listed."""
        return self.start_write(root, arch, workers, needs, kept, data, inputs, announce=False).wait()

    def start_write(self, root, arch="sm_90", workers=None, needs=None, kept=None, data=False, inputs=None,
                    announce=True):
        """write(), returning once the compiles have started: a CubinWrite whose `folder` is written
        but for the cubins still compiling, and whose finish() waits for them. With `announce`, every
        cubin to compile is listed in the index at once as pending, so `ktune tune` can start now:
        it measures the configs that are ready and waits for the others (compilation in parallel
        with measurement); a compile that fails is then listed as failed, a compile error of its
        candidate. A TorchReference's data (`data`) is written before this returns, while the
        compiles run."""
        folder = pathlib.Path(root) / f"{self.name}-{self.identity(arch)}"
        cubins = folder / f"{self.name}.cubins"
        cubins.mkdir(parents=True, exist_ok=True)
        toml_path = folder / f"{self.name}.toml"
        if not toml_path.is_file():
            import triton
            if isinstance(self.reference, CudaReference):
                cubin_index.replace_file(folder / f"{self.name}.cu", self.reference.source.encode())
            # the folder counts as written once its description is there
            cubin_index.replace_file(toml_path, self.toml_text(arch, triton.__version__).encode())
        kept = {(dtype, self.shape_of(shape)): list(configs) for (dtype, shape), configs in (kept or {}).items()}
        prunes = [self._prune_entry(dtype, shape, configs) for (dtype, shape), configs in kept.items()]
        writing = self._start_cubins(folder, cubins, arch, self._jobs(needs, kept), workers, prunes, announce)
        if data and isinstance(self.reference, TorchReference):
            for dtype, values in needs or []:
                if values is not None:
                    write_data(self, folder, dtype, values, inputs=inputs)
        return writing

    def _prune_entry(self, dtype, shape, configs):
        """The `[[prune]]` entry of a key (docs/byo.md) that tunes `configs` only."""
        if dtype not in self.dtypes:
            raise BadInputError(f"{self.name}: dtype {dtype!r} is not one of its dtypes {self.dtypes}")
        points = [self.point(c) for c in configs]
        if not points or any(self.config_of(p) is None for p in points):
            raise BadInputError(f"{self.name}: a key's kept configs must be some of its configs, got {configs}")
        return {"dtype": dtype, "shape": _shape_values(shape), "keep": points}

    def _jobs(self, needs, kept):
        """(config, dtype, variant index) of every cubin `needs` asks for, in index order: the configs
        `kept` keeps for a need's key, else every config."""
        specs = self.specializations()
        if needs is None:
            needs = [(d, None) for d in self.dtypes]
        wanted = set()
        everything = range(len(self.configs))
        for dtype, values in needs:
            if dtype not in self.dtypes:
                raise BadInputError(f"{self.name}: dtype {dtype!r} is not one of its dtypes {self.dtypes}")
            if isinstance(values, str):
                values = _shape_values(values)
            configs = everything
            if values is not None and (dtype, self.shape_of(values)) in kept:
                points = [self.point(c) for c in kept[(dtype, self.shape_of(values))]]
                configs = [i for i in everything if self.point(self.configs[i]) in points]
            wanted.update((i, dtype, v) for i in configs for v in self.needed_specializations(values))
        return [(i, d, v) for i in everything for d in self.dtypes for v in range(len(specs)) if (i, d, v) in wanted]

    def _pending_entry(self, i, dtype, variant):
        """The index entry of a cubin before it is compiled: what is known without compiling."""
        config, (ones, aligned) = self.configs[i], self.specializations()[variant]
        p = self.point(config)
        constexprs = {k: config.kwargs[k] for k in self.signature(dtype) if k in config.kwargs}
        name = config_name(constexprs, p["num_warps"], p["num_stages"])
        return {"config": p, "dtype": dtype, "file": f"{name}.{dtype}.v{variant}.cubin", "threads": 32 * p["num_warps"],
                "ones": list(ones), "aligned": list(aligned), "name": name, "pending": True}

    def _start_cubins(self, folder, cubins, arch, jobs, workers, prunes, announce):
        """Starts compiling the jobs the index does not hold whole (cubin_index.py), lists the prunes
        (and, with `announce`, those jobs as pending), and returns the CubinWrite that finishes them.
        Shards of a job array may do this in one folder on a shared file system at once: the index
        is rewritten whole under a lock, so no shard's cubins are lost."""
        listed, listed_prunes = cubin_index.read(cubins / "index.toml")
        held = {cubin_index.entry_key(e) for e in listed if cubin_index.is_whole(e)}
        specs = self.specializations()
        todo = [j for j in jobs
                if cubin_index.cubin_key(self.point(self.configs[j[0]]), j[1], *specs[j[2]]) not in held]
        held_prunes = {cubin_index.prune_key(e): e for e in listed_prunes}
        # per config and dtype, the most specialized cubin first: the worker runs the first that fits
        order = {cubin_index.cubin_key(self.point(c), d, *v): n for n, (c, d, v) in enumerate(
            (c, d, v) for c in self.configs for d in self.dtypes for v in specs)}
        pending = [self._pending_entry(*j) for j in todo]
        if (announce and todo) or any(held_prunes.get(cubin_index.prune_key(e)) != e for e in prunes):
            cubin_index.update(cubins, pending if announce else [], prunes, order)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1)
        futures = {pool.submit(self._compile_one, self.configs[i], dtype, arch, *specs[v]): (entry, v)
                   for (i, dtype, v), entry in zip(todo, pending)}
        return CubinWrite(folder, cubins, pool, futures, order, announce)

    def toml_text(self, arch, triton_version):
        """The description (docs/byo.md) with its `[prebuilt]` table; the cubins are listed in the
        folder's index (write)."""
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
                # a torch reference's inputs are made here, as the fill says, and read from files
                if a.fill and not isinstance(self.reference, TorchReference):
                    lines.append(f"fill = {_toml(dict(a.fill))}")
        lines += ["", "[[launch]]", f"grid = {_toml(self.grid)}"]
        if isinstance(self.reference, TorchReference):
            r = self.reference
            lines += ["", "[reference]", f"data = {_toml(folder_name(self.name))}", f"producer = {_toml(r.producer())}"]
            if r.tolerance:
                lines.append(f"tolerance = {_toml(dict(r.tolerance))}")
        elif self.reference is not None:
            r = self.reference
            lines += ["", "[reference]", f"function = {_toml(r.function)}", f"grid = {_toml(r.grid)}",
                      f"block = {_toml(r.block)}"]
            if r.tolerance:
                lines.append(f"tolerance = {_toml(dict(r.tolerance))}")
        if self.work:
            lines += ["", "[work]"] + [f"{k} = {_toml(v)}" for k, v in self.work.items()]
        lines += ["", "[prebuilt]", f"arch = {_toml(arch)}",
                  f"producer = {_toml(f'triton {triton_version}, source {str(self.fn.cache_key)[:16]}')}"]
        return "\n".join(lines) + "\n"
