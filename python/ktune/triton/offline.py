"""Tuning a key file offline, whole or one shard of it: `python -m ktune.triton tune FILE`.

A key file holds `KERNEL SHAPE DTYPE [LAYOUT]` lines: the keys `ktune.triton.autotune` served
untuned (misses.py: the kernel named `triton:MODULE:FUNCTION`), and, when a program records the
misses of `ktune.Runtime` or `ktune.torch` into the same file, keys of ktune's own kernels. Each
Triton kernel's module is imported, its description folder written (every config compiled ahead of
time for the dtypes and specializations its lines need, of the configs its `prune_configs_by`
keeps for each key; description.py, prune.py) and its lines renamed to
the folder's kernel; then ONE `ktune tune --shapes` run tunes every key of the file, started while
the cubins still compile (it measures the compiled ones and waits for the rest), so
`--shard I/N` (or `auto` in a Slurm job array or a Kubernetes Indexed Job) splits the whole file by
ktune's own rule (tuner/inputs/shard_plan.hpp: every key in exactly one shard, balanced by
estimated evaluations, the same on every machine), and the shards' databases merge with
`ktune cache merge`.
"""

import importlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading

from .._executable import ktune_executable
from ..errors import BadInputError, from_code
from .autotune import Autotuner
from .prune import kept_for_keys
from .tune import cache_root

PREFIX = "triton:"


def kernel_of(name):
    """The Autotuner a key's `triton:MODULE:FUNCTION` names (its module imported)."""
    parts = name.split(":")
    if len(parts) != 3 or parts[0] != "triton" or not parts[1] or not parts[2]:
        raise BadInputError(f"{name!r} is not a Triton kernel's name (triton:MODULE:FUNCTION)")
    try:
        module = importlib.import_module(parts[1])
    except ImportError as e:
        raise BadInputError(f"{name}: cannot import module {parts[1]!r} ({e}); run where the program that "
                            "recorded it runs, or put its folder on PYTHONPATH") from None
    obj = getattr(module, parts[2], None)
    if not isinstance(obj, Autotuner):
        raise BadInputError(f"{parts[1]}.{parts[2]} is not a ktune.triton.autotune kernel")
    return obj


def translate(path, out, arch="sm_90", root=None, data=False, writings=None):
    """Writes `path`'s keys to `out` for `ktune tune --shapes`, line for line (so ktune's "FILE:LINE"
    messages name the same lines): a Triton kernel's line with the kernel its folder holds, other
    keys as written, comments as blank lines. Returns the folders written, one a Triton kernel.
    Every cubin is compiled before this returns, unless `writings` is a list: it then takes each
    folder's CubinWrite (Description.start_write), its cubins listed as pending and still
    compiling, for the caller to finish once `ktune tune` has started.
    BadInputError "FILE:LINE: ..." for a Triton line that is not `triton:MODULE:FUNCTION SHAPE DTYPE`
    or names what cannot be imported."""
    rows = []  # (fields of a Triton line, or None and the text kept as it is)
    needs = {}  # triton:MODULE:FUNCTION -> [(dtype, shape text)]
    first_line = {}  # triton:MODULE:FUNCTION -> the line that names it first
    with open(path) as f:
        for number, text in enumerate(f, 1):
            fields = text.split("#", 1)[0].split()
            if not fields or not fields[0].startswith(PREFIX):
                rows.append((None, "" if not fields else text.rstrip("\n")))
                continue
            if len(fields) != 3:
                raise BadInputError(f"{path}:{number}: expected '{fields[0]} SHAPE DTYPE' (a Triton kernel has "
                                    f"no layout), got {' '.join(fields)!r}")
            needs.setdefault(fields[0], []).append((fields[2], fields[1]))
            first_line.setdefault(fields[0], number)
            rows.append((fields, None))
    folders = {}  # triton:MODULE:FUNCTION -> (folder, ktune's kernel name)
    for kernel, wanted in needs.items():
        try:
            description = kernel_of(kernel).description
            writing = description.start_write(root or cache_root(), arch=arch, needs=wanted,
                                              kept=kept_for_keys(description, wanted), data=data,
                                              announce=writings is not None)
            if writings is None:
                writing.wait()
            else:
                writings.append(writing)
            folders[kernel] = (writing.folder, description.name)
        except BadInputError as e:
            raise BadInputError(f"{path}:{first_line[kernel]}: {e}") from None
    lines = [text if fields is None else f"{folders[fields[0]][1]} {fields[1]} {fields[2]}"
             for fields, text in rows]
    pathlib.Path(out).write_text("\n".join(lines) + "\n")
    return [folder for folder, _ in folders.values()]


def tune_file(path, db=None, arch="sm_90", compile_only=False, shard=None, shard_count=None, extra_args=(),
              root=None):
    """Tunes the keys of the key file `path` (module docstring) with one `ktune tune` run and returns
    its JSON document. `shard`: "I/N" or "auto" (and `shard_count` with auto under an Indexed Job),
    ktune's `--shard`. `compile_only`: compile every candidate for `arch`, no GPU needed.
    `extra_args` go to `ktune tune` as given (`--budget 8`, `--device 1`). ktune's messages stream to
    stderr with the key file's name in place of the translated file's; a failure raises the ktune.Error
    of its exit code (e.code is the exit code itself, 130 or 143 for a sweep stopped by a signal)."""
    if not os.path.isfile(path):
        raise BadInputError(f"no key file {path}")
    with tempfile.TemporaryDirectory(prefix="ktune_triton_keys_") as tmp:
        keys = os.path.join(tmp, "keys.txt")
        # under --compile-only the report reads every cubin: they are compiled first; else `ktune
        # tune` starts while they compile (compilation in parallel with measurement)
        writings = None if compile_only else []
        folders = translate(path, keys, arch=arch, root=root, data=not compile_only, writings=writings)
        cmd = [ktune_executable(), "tune", "--shapes", keys, "--json"]
        for folder in folders:
            cmd += ["--kernel-dir", str(folder)]
        if db is not None:
            cmd += ["--db", str(db)]
        if compile_only:
            cmd += ["--compile-only", "--arch", arch]
        if shard is not None:
            cmd += ["--shard", str(shard)]
        if shard_count is not None:
            cmd += ["--shard-count", str(shard_count)]
        cmd += list(extra_args)
        rc, out, tail = _run(cmd, keys, str(path), meanwhile=lambda: [w.finish() for w in writings or []])
    if rc != 0:
        e = from_code(rc, f"ktune tune exited {rc} on the keys of {path}: {tail.strip()[-2000:]}")
        e.code = rc
        raise e
    return json.loads(out)


def _run(cmd, translated, original, meanwhile=None):
    """Runs `cmd`, and `meanwhile()` once it has started; its stderr is echoed line by line with
    `translated` named `original`. Returns the exit code, stdout and the last lines of stderr."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tail = []

    def echo():
        for line in proc.stderr:
            line = line.replace(translated, original)
            sys.stderr.write(line)
            tail.append(line)
            del tail[:-40]

    t = threading.Thread(target=echo, daemon=True)
    t.start()
    collected = []
    reader = threading.Thread(target=lambda: collected.append(proc.stdout.read()), daemon=True)
    reader.start()
    if meanwhile is not None:
        try:
            meanwhile()
        except BaseException:
            proc.kill()
            raise
    reader.join()
    out = collected[0] if collected else ""
    proc.wait()
    t.join()
    return proc.returncode, out, "".join(tail)

