"""`python -m ktune.triton tune FILE [--db DB] [--arch sm_90] [--compile-only]`: tunes the keys a
file of misses lists (misses.py): each `triton:MODULE:FUNCTION SHAPE DTYPE` line's module is imported
and its FUNCTION, a `ktune.triton.autotune` kernel, tuned through ktune for the shape and dtype.
Prints ktune's JSON document of each (kernel, dtype) on stdout."""

import argparse
import importlib
import json
import sys
from collections import OrderedDict

from ..errors import BadInputError, Error
from .autotune import Autotuner
from .misses import read_keys
from .tune import tune


def kernel_of(name):
    """The Autotuner a key's `triton:MODULE:FUNCTION` names."""
    parts = name.split(":")
    if len(parts) != 3 or parts[0] != "triton":
        raise BadInputError(f"{name!r} is not a Triton kernel's name (triton:MODULE:FUNCTION)")
    obj = getattr(importlib.import_module(parts[1]), parts[2], None)
    if not isinstance(obj, Autotuner):
        raise BadInputError(f"{parts[1]}.{parts[2]} is not a ktune.triton.autotune kernel")
    return obj


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m ktune.triton", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tune", help="tune the keys of a file of misses")
    t.add_argument("file")
    t.add_argument("--db")
    t.add_argument("--arch", default="sm_90")
    t.add_argument("--compile-only", action="store_true")
    a = p.parse_args(argv)
    try:
        groups = OrderedDict()
        for kernel, shape, dtype in read_keys(a.file):
            groups.setdefault((kernel, dtype), []).append(shape)
        for (kernel, dtype), shapes in groups.items():
            doc = tune(kernel_of(kernel).description, shapes, dtype, db=a.db, arch=a.arch,
                       compile_only=a.compile_only)
            print(json.dumps(doc))
    except Error as e:
        print(f"python -m ktune.triton: error: {e}", file=sys.stderr)
        return e.code
    return 0


if __name__ == "__main__":
    sys.exit(main())
