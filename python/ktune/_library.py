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
import struct
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
    """Whether the library was built with AddressSanitizer (it needs libasan.so, and python3 cannot
    load it: ASan must come first in a process). Read from the names its ELF dynamic section needs
    (a few hundred bytes); a file that is not a 64-bit little-endian ELF is searched whole."""
    try:
        with open(path, "rb") as f:
            needed = _needed_libraries(f)
            if needed is None:
                f.seek(0)
                return b"libasan.so" in f.read()
            return any(name.startswith(b"libasan.so") for name in needed)
    except OSError:
        return False


def _needed_libraries(f):
    """The DT_NEEDED names of the 64-bit little-endian ELF file f, or None when f is not one or its
    dynamic section cannot be read."""
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return None
    (phoff,) = struct.unpack_from("<Q", head, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
    if phentsize < 56:
        return None
    f.seek(phoff)
    table = f.read(phentsize * phnum)
    loads, dynamic = [], None
    for i in range(min(phnum, len(table) // phentsize)):
        kind, _, offset, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
        if kind == 1:  # PT_LOAD
            loads.append((vaddr, offset, filesz))
        elif kind == 2:  # PT_DYNAMIC
            dynamic = (offset, filesz)
    if dynamic is None:
        return []  # linked statically: needs no library
    f.seek(dynamic[0])
    raw = f.read(dynamic[1])
    needed, strtab, strsz = [], None, None
    for tag, value in struct.iter_unpack("<qQ", raw[:len(raw) // 16 * 16]):
        if tag == 0:  # DT_NULL
            break
        if tag == 1:  # DT_NEEDED: an offset into the string table
            needed.append(value)
        elif tag == 5:  # DT_STRTAB (an address)
            strtab = value
        elif tag == 10:  # DT_STRSZ
            strsz = value
    segment = next(((vaddr, offset) for vaddr, offset, filesz in loads if strtab is not None
                    and vaddr <= strtab < vaddr + filesz), None)
    if segment is None or strsz is None:
        return None
    f.seek(strtab - segment[0] + segment[1])
    strings = f.read(strsz)
    ends = [strings.find(b"\0", o) for o in needed]
    return [strings[o:end if end >= 0 else None] for o, end in zip(needed, ends)]


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
