"""`ktune.triton.autotune`: a drop-in for `triton.autotune` whose configs are tuned by ktune (ahead of
time, or on a miss) and served from ktune's database, or from a `ktune serve` URL. On a call, the
key (the kernel, its key arguments' values and the extra dimensions, the dtype) is looked up once a
process (in the database `db=`, else $KTUNE_DB; or over HTTP, with `server=` or $KTUNE_SERVER); a
hit launches the stored config through Triton's own launcher, with nothing measured; a miss launches
the first config (Triton's default; D9: an untuned key runs the framework's own code) and records
the key for `python -m ktune.triton tune FILE`, or, with on_miss="tune", tunes the key through
ktune first.

    @kt.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), ...], key=["n_cols"],
                 dims={"rows": lambda a: a["x_ptr"].shape[0]}, dims_order=["rows", "n_cols"],
                 args={...}, grid="rows", reference=kt.CudaReference(...))
    @triton.jit
    def rmsnorm_rows(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr): ...

    rmsnorm_rows[(rows,)](x, w, y, n_cols, eps)

The benchmark-only hooks of triton.autotune (reset_to_zero, restore_value, pre_hook, post_hook of
the tuner) have nothing to do here, since nothing is timed in the process; a config's own pre_hook
runs before its launch, as in Triton. `prune_configs_by` cuts the configs a key tunes (prune.py).
"""

import os
import threading

from triton.runtime.jit import KernelInterface

from ..errors import BadInputError
from ..tensors import dtype_name
from .description import Description
from .misses import record_miss
from .prune import Pruner
from .reference_data import call_inputs
from .tune import best, shape_text, tune

ON_MISS = ("default", "tune")


def dimension_names(key):
    """The dimensions of key arguments: their names in lower case, as ktune's shapes write them
    (matmul's M, N, K are the dimensions m, n, k)."""
    return [k.lower() for k in key]


class Autotuner(KernelInterface):
    """A `@triton.jit` kernel whose config comes from ktune's database (module docstring)."""

    def __init__(self, fn, description: Description, key, dims=None, dtype_arg=None, db=None, gpu=None,
                 on_miss="default", record_misses=None, arch="sm_90", server=None):
        if on_miss not in ON_MISS:
            raise BadInputError(f"on_miss={on_miss!r}: one of {ON_MISS}")
        if server is None and db is None:
            server = os.environ.get("KTUNE_SERVER") or None
        if server is not None and db is not None:
            raise BadInputError(f"look keys up in a database (db={db!r}) or a server (server={server!r}), not both")
        if server is not None and on_miss == "tune":
            raise BadInputError("on_miss='tune' tunes into a local database, which a server does not read: record "
                                "the misses (record_misses=FILE), tune them with `python -m ktune.triton tune FILE "
                                "--db DB` and send DB to the server (`ktune cache push --server URL --db DB`)")
        self.fn = fn
        self.base_fn = getattr(fn, "fn", fn)
        self.arg_names = fn.arg_names
        self.description = description
        self.keys = list(key)
        self.dims = dict(dims or {})
        unknown = [k for k in self.keys if k not in self.arg_names]
        if unknown:
            raise BadInputError(f"key names {unknown}, which {description.function} does not take")
        missing = [d for d in description.dims if d not in dimension_names(self.keys) and d not in self.dims]
        if missing:
            raise BadInputError(f"dimension(s) {missing} are neither key arguments nor in dims=")
        buffers = [n for n, a in description.args.items() if a.kind != "scalar" and a.type == "dtype"]
        self.dtype_arg = dtype_arg or (buffers[0] if buffers else None)
        if self.dtype_arg is None:
            raise BadInputError("no buffer of the problem's dtype: name the argument that has it (dtype_arg=)")
        self.db = db
        self.server = server
        self.gpu = gpu
        self.on_miss = on_miss
        self.record_misses = record_misses if record_misses is not None else os.environ.get("KTUNE_RECORD_MISSES")
        self.arch = arch
        self.cache = {}  # (shape text, dtype) -> triton.Config
        self.sources = {}  # (shape text, dtype) -> "tuned" | "tuned now" | "default"
        self.best_config = None
        self._lock = threading.Lock()

    @property
    def kernel_name(self):
        """The name misses are recorded under: triton:MODULE:FUNCTION."""
        return f"triton:{self.description.module}:{self.description.function}"

    def key_of(self, nargs):
        """(shape text, dtype) of a call's arguments by name."""
        values = {d: nargs[k] for k, d in zip(self.keys, dimension_names(self.keys))}
        for d, f in self.dims.items():
            values[d] = f(nargs)
        dims = {d: int(values[d]) for d in self.description.dims}
        return shape_text(self.description, dims), dtype_name(nargs[self.dtype_arg].dtype)

    def _gpu(self, nargs):
        if self.gpu is not None:
            return self.gpu
        t = nargs[self.dtype_arg]
        try:
            import torch
            if isinstance(t, torch.Tensor) and t.is_cuda:
                return torch.cuda.get_device_name(t.device)
        except ImportError:
            pass
        return None  # the database's only GPU

    def config_for(self, nargs, kwargs=None):
        """The triton.Config of a call's key: the stored winner, else (on a miss) the default, the
        first config `prune_configs_by` keeps for the call. `nargs`: the call's arguments by name;
        `kwargs`: those it passed by keyword (Triton's prune sees the others as named_args)."""
        kwargs = kwargs or {}
        key = self.key_of({**nargs, **kwargs})
        with self._lock:
            if key in self.cache:
                return self.cache[key]
            shape, dtype = key
            gpu = self._gpu({**nargs, **kwargs})
            config, _ = best(self.description, shape, dtype, db=self.db, gpu=gpu, server=self.server)
            source = "tuned"
            kept = self.description.configs
            if config is None and self.description.pruner is not None:
                kept = self.description.pruner.keep(self.description, nargs, kwargs)
            if config is None and self.on_miss == "tune":
                tune(self.description, [shape], dtype, db=self.db, arch=self.arch, kept={(dtype, shape): kept},
                     inputs=call_inputs(self.description, {**nargs, **kwargs}))
                config, _ = best(self.description, shape, dtype, db=self.db, gpu=gpu)
                source = "tuned now"
            if config is None:
                config, source = kept[0], "default"
                if self.record_misses:
                    record_miss(self.record_misses, self.kernel_name, shape, dtype)
            self.cache[key] = config
            self.sources[key] = source
            return config

    def run(self, *args, **kwargs):
        positional = dict(zip(self.arg_names, args))
        config = self.config_for(positional, kwargs)
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**positional, **kwargs, **config.all_kwargs()})
        return self.fn.run(*args, **kwargs, **config.all_kwargs())

    def tune(self, shapes, dtype="bf16", **options):
        """Tunes `shapes` (dicts of the dimensions or shape texts) now through ktune (tune.tune)."""
        return tune(self.description, shapes, dtype, db=options.pop("db", self.db), arch=options.pop("arch", self.arch),
                    **options)


def autotune(configs, key, *, args, grid, dims=None, dims_order=None, dtypes=("bf16",), reference=None,
             verify=True, work=None, dtype_arg=None, db=None, gpu=None, on_miss="default", record_misses=None,
             arch="sm_90", server=None, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """The decorator (module docstring). `configs` and `key` as triton.autotune's; `args`, `grid`,
    `reference`, `work` describe the kernel to ktune's harness (description.py); `dims` computes
    dimensions that are not key arguments from a call's arguments by name (e.g. the row count of a
    row-wise kernel), and `dims_order` orders the key (default: `key`, then `dims`). A key argument's
    dimension is its name in lower case (expressions of a matmul keyed on M, N, K use m, n, k).
    `server` ("http://host:8787", default $KTUNE_SERVER unless `db` is given) answers look-ups
    from `ktune serve` instead of a database file: a 404 is a miss, any other error raises.
    `prune_configs_by` as triton.autotune's: each key compiles and tunes only the configs it keeps,
    and a miss launches the first of them (prune.py)."""
    pruner = Pruner.of(prune_configs_by)
    key_dims = dimension_names(key)
    order = list(dims_order) if dims_order else key_dims + [d for d in (dims or {}) if d not in key_dims]

    def decorator(fn):
        description = Description(fn, configs, dims=order, args=args, grid=grid, dtypes=dtypes,
                                  reference=reference, verify=verify, work=work)
        description.pruner = pruner
        return Autotuner(fn, description, key, dims=dims, dtype_arg=dtype_arg, db=db, gpu=gpu, on_miss=on_miss,
                         record_misses=record_misses, arch=arch, server=server)

    return decorator
