"""A Triton description folder's cubin index, NAME.cubins/index.toml (docs/byo.md): one `[[cubin]]` a
config, dtype and specialization, and one `[[prune]]` a key whose configs `prune_configs_by` cut
(prune.py). It is not part of the kernel's hash, so cubins and prunes are added as tuning needs them.

Every write rewrites the file whole under a lock: shards of a job array adding cubins to one folder
on a shared file system lose none of each other's, and a reader (ktune's tuner) sees one version or
the next, never a part.

A cubin can be listed before it exists, `pending = true`, and one whose compile failed says why in
`failed`: `ktune tune` then measures the configs that are ready while the others still compile
(kernel_templates/user_kernel/user_kernel_pending_cubin.hpp), and records a failed one as a compile
error. A pending or failed entry does not count as held: the next write compiles it again.
"""

import contextlib
import fcntl
import json
import os
import threading

from .toml_value import toml_value


def replace_file(path, data):
    """Writes `path` whole: a reader sees the old file or the new one, never a part."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@contextlib.contextmanager
def locked(path):
    """An exclusive lock on `path` (created if missing) while the block runs."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def read(index):
    """The `[[cubin]]` and `[[prune]]` entries of a cubin index (two lists); none when it does not
    exist."""
    if not index.is_file():
        return [], []
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    doc = tomllib.loads(index.read_text())
    return doc.get("cubin", []), doc.get("prune", [])


def cubin_key(config, dtype, ones, aligned):
    """What identifies a cubin in the index, as ktune's reader does: config, dtype, ones, aligned."""
    return json.dumps(dict(config), sort_keys=True), dtype, tuple(ones), tuple(aligned)


def entry_key(entry):
    return cubin_key(entry["config"], entry["dtype"], entry.get("ones", ()), entry.get("aligned", ()))


def prune_key(entry):
    """What identifies a `[[prune]]` entry: its dtype and shape."""
    return entry["dtype"], json.dumps(dict(entry["shape"]), sort_keys=True)


def is_whole(entry):
    """Whether a `[[cubin]]` entry names a compiled cubin (not pending, not failed)."""
    return not entry.get("pending", False) and "failed" not in entry


def _rank(entry):
    """Which of two entries of one cubin the index keeps: a whole one over a failed one over a
    pending one (a shard's pending entry never hides another's compiled cubin)."""
    return 2 if is_whole(entry) else 1 if "failed" in entry else 0


def text(entries, prunes=()):
    """The index's text: every `[[cubin]]`, then every `[[prune]]`."""
    lines = ["# The cubins of this folder's description, added as tuning needs them; not part of the kernel's hash."]
    for e in entries:
        lines += ["", "[[cubin]]"] + [f"{k} = {toml_value(v)}" for k, v in e.items()]
    for e in prunes:
        lines += ["", "[[prune]]"] + [f"{k} = {toml_value(v)}" for k, v in e.items()]
    return "\n".join(lines) + "\n"


def update(cubins, entries=(), prunes=(), order=None):
    """Adds `entries` and `prunes` to the index of the folder `cubins` under its lock. An entry
    replaces the listed one of its cubin when it is further along (whole > failed > pending), or as
    far along but not whole; a prune replaces its key's old one (a changed prune function). `order`: entry key ->
    rank, the order entries are listed in (per config and dtype, the most specialized first: the
    worker runs the first that fits)."""
    index = cubins / "index.toml"
    with locked(cubins / ".index.lock"):
        listed, listed_prunes = read(index)
        merged = {entry_key(e): e for e in listed}
        for e in entries:
            old = merged.get(entry_key(e))
            # a whole entry stays (another shard's compile of the same cubin); the others give way
            if old is None or _rank(e) > _rank(old) or (_rank(e) == _rank(old) and not is_whole(old)):
                merged[entry_key(e)] = e
        merged_prunes = {prune_key(e): e for e in listed_prunes}
        merged_prunes.update((prune_key(e), e) for e in prunes)
        listed = list(merged.values())
        if order is not None:
            listed.sort(key=lambda e: order.get(entry_key(e), len(order)))
        replace_file(index, text(listed, list(merged_prunes.values())).encode())
