"""`python -m ktune.triton tune FILE [--db DB] [--arch sm_90] [--compile-only] [--shard I/N|auto]
[--shard-count N] [ktune tune's options...]`: tunes the keys of a key file (offline.py): each
`triton:MODULE:FUNCTION SHAPE DTYPE` line's module is imported and its FUNCTION, a
`ktune.triton.autotune` kernel, tuned through ktune for the shape and dtype, beside the file's keys
of ktune's own kernels, in one `ktune tune` run (one shard of it with --shard). Prints ktune's JSON
document on stdout; exits with ktune's exit code."""

import argparse
import json
import sys

from ..errors import Error
from .offline import tune_file


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m ktune.triton", description=__doc__.split("\n\n")[0],
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tune", allow_abbrev=False,
                       help="tune the keys of a key file (options it does not know go to `ktune tune`)",
                       epilog="e.g. python -m ktune.triton tune misses.keys --shard auto "
                              "--db shard-$SLURM_ARRAY_TASK_ID.db, then ktune cache merge --db all.db shard-*.db")
    t.add_argument("file")
    t.add_argument("--db")
    t.add_argument("--arch", default="sm_90", help="the architecture the configs compile for (default sm_90)")
    t.add_argument("--compile-only", action="store_true", help="compile every candidate, measure none (no GPU)")
    t.add_argument("--shard", metavar="I/N|auto",
                   help="tune shard I of N of the file's keys, ktune tune's rule (auto: a Slurm array task's "
                        "or an Indexed Job's index)")
    t.add_argument("--shard-count", type=int, metavar="N", help="with --shard auto in a Kubernetes Indexed Job")
    a, rest = p.parse_known_args(argv)
    try:
        doc = tune_file(a.file, db=a.db, arch=a.arch, compile_only=a.compile_only, shard=a.shard,
                        shard_count=a.shard_count, extra_args=rest)
    except Error as e:
        print(f"python -m ktune.triton: error: {e}", file=sys.stderr)
        return e.code
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
