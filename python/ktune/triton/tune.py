"""Tuning a described Triton kernel (description.py) through ktune: its folder is written (each config
compiled ahead of time, in parallel, for the tuned dtype and the shapes' specialization only) and
`ktune tune` measures it in the worker like any candidate: verified against the reference, timed by
the one timing path, crash-isolated, stored in the database. `best` reads a winner back through the
look-up ABI (ktune.query)."""

import json
import os
import pathlib
import subprocess
import tempfile

from .._executable import ktune_executable
from ..errors import BadInputError, NotFoundError, RuntimeFailure
from ..query import query
from .description import Description
from .prune import kept_for_keys


def cache_root():
    """Where description folders are kept: $KTUNE_TRITON_DIR, else $XDG_CACHE_HOME/ktune/triton
    (~/.cache/ktune/triton)."""
    env = os.environ.get("KTUNE_TRITON_DIR")
    if env:
        return pathlib.Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "ktune" / "triton"


def shape_text(description: Description, values):
    """`values` (a dict of every dimension) as ktune's shape text, in the description's order."""
    missing = [d for d in description.dims if d not in values]
    if missing:
        raise BadInputError(f"{description.name}: no value for dimension(s) {missing}")
    return ",".join(f"{d}={int(values[d])}" for d in description.dims)


def tune(description: Description, shapes, dtype="bf16", db=None, arch="sm_90", compile_only=False,
         extra_args=(), root=None, kept=None, inputs=None):
    """Tunes `description` for each shape (dicts of the dimensions, or shape texts) and dtype with
    `ktune tune`, and returns its JSON document. `ktune tune` starts while Triton still compiles the
    configs: it measures the ones that are ready and waits for the others (Description.start_write);
    a config whose compile fails is a compile error in the document. `compile_only`: compile every
    candidate for `arch` first and store them as skipped (no GPU needed). With a `prune_configs_by`
    (prune.py), each key tunes the configs it keeps: as given in `kept` ({(dtype, shape text):
    configs}, a call's prune), else as the prune keeps them for the key. A TorchReference computes
    each key's expected outputs first (reference_data.py; from `inputs`, a call's tensors, when they
    fit). RuntimeFailure with ktune's message when it fails."""
    texts = [s if isinstance(s, str) else shape_text(description, s) for s in shapes]
    kept = {**kept_for_keys(description, [(dtype, t) for t in texts if (dtype, t) not in (kept or {})]),
            **(kept or {})}
    needs = [(dtype, t) for t in texts]
    writing = description.start_write(root or cache_root(), arch=arch, needs=needs, kept=kept,
                                      data=not compile_only, inputs=inputs, announce=not compile_only)
    if compile_only:
        # the compile-only report reads every cubin's resources: compile them all first
        writing.wait()
    cmd = [ktune_executable(), "tune", "--kernel-dir", str(writing.folder), "--kernel", description.name,
           "--dtype", dtype, "--json"]
    for t in texts:
        cmd += ["--shape", t]
    if db is not None:
        cmd += ["--db", str(db)]
    if compile_only:
        cmd += ["--compile-only", "--arch", arch]
    cmd += list(extra_args)
    # files, not pipes: nothing reads ktune's output while the compiles finish
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        try:
            writing.finish()
            code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if code != 0:
        raise RuntimeFailure(f"{' '.join(cmd)} exited {code}: {stderr.strip()[-2000:]}")
    return json.loads(stdout)


def best(description: Description, shape, dtype="bf16", db=None, gpu=None, server=None):
    """The triton.Config that won `shape` (a dict or shape text), and the winner's document
    (`ktune query --json`'s), from the database `db` or the `ktune serve` URL `server`; (None, None)
    when nothing is tuned for it, or the winner is none of the description's configs (a changed
    config list). Any other failure (a server that cannot be reached or answers an error) raises."""
    text = shape if isinstance(shape, str) else shape_text(description, shape)
    try:
        doc = query(description.name, text, dtype, gpu=gpu, db=None if db is None else str(db), fallback=False,
                    server=server)
    except NotFoundError:
        return None, None
    config = description.config_of(doc.get("config", {}).get("params", {}))
    return (config, doc) if config is not None else (None, None)
