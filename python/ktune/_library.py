"""Finding and loading ktune's shared libraries.

libktune_runtime.so (the dispatch ABI) and libktune.so (the look-up ABI) are searched, in order:
1. $KTUNE_LIBRARY: paths separated by ':', each a library, or a directory holding one (the other
   library is also looked for beside a library named there);
2. the build tree of the repository this package sits in (build/release first, then build/*;
   a build with AddressSanitizer is passed over: python3 cannot load it);
3. the install tree this package was installed into (<prefix>/lib, <prefix>/lib64);
4. the system's loader path (ldconfig, $LD_LIBRARY_PATH).
When none loads, the error lists every place tried and why each failed.
"""

import ctypes
import ctypes.util
import os
import pathlib
import threading

from .errors import LibraryNotFoundError

_NAMES = {"runtime": "libktune_runtime.so", "lookup": "libktune.so"}
_SUBDIRS = {"runtime": "runtime", "lookup": "capi"}
_lock = threading.Lock()
_loaded = {}


def _candidates(which):
    name = _NAMES[which]
    env = os.environ.get("KTUNE_LIBRARY")
    for entry in filter(None, (env or "").split(os.pathsep)):
        p = pathlib.Path(entry)
        if p.is_dir():
            yield p / name
        elif p.name.startswith(name):
            yield p
        else:  # the other library's path: look beside it
            yield p.parent / name
    here = pathlib.Path(__file__).resolve().parent
    for root in (here.parent.parent, here.parent):  # <repo>/python/ktune, or an installed copy
        build = root / "build"
        if build.is_dir():
            presets = sorted(build.iterdir(), key=lambda d: (d.name != "release", d.name))
            for preset in presets:
                yield preset / _SUBDIRS[which] / name
    for up in here.parents:
        for lib in ("lib", "lib64"):
            candidate = up / lib / name
            if candidate.exists():
                yield candidate
    found = ctypes.util.find_library(name[3:-3])
    yield pathlib.Path(found) if found else pathlib.Path(name)


def _sanitized(path):
    """Whether the library was built with AddressSanitizer (python3 cannot load it: ASan must come
    first in a process)."""
    try:
        with open(path, "rb") as f:
            return b"libasan.so" in f.read()
    except OSError:
        return False


def load(which):
    """The loaded library ("runtime" or "lookup"), loading it on first use."""
    with _lock:
        if which in _loaded:
            return _loaded[which]
        tried = []
        seen = set()
        for path in _candidates(which):
            key = str(path)
            if key in seen:
                continue
            seen.add(key)
            if path.is_absolute() and not path.exists():
                tried.append(f"{path}: no such file")
                continue
            if path.is_absolute() and _sanitized(path):
                tried.append(f"{path}: built with AddressSanitizer, which python3 cannot load")
                continue
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as e:
                tried.append(f"{path}: {e}")
                continue
            _loaded[which] = lib
            return lib
        raise LibraryNotFoundError(
            f"cannot load {_NAMES[which]}; set KTUNE_LIBRARY to its path or build ktune "
            "(scripts/build.sh). Tried:\n  " + "\n  ".join(tried))
