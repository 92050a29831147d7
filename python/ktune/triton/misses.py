"""Recording the keys `autotune` served without a tuned config, in the key-line format the
runtime's miss recorder writes (`KERNEL SHAPE DTYPE`, one a line, `#` comments), the kernel named
`triton:MODULE:FUNCTION` so that a later process can import it: `python -m ktune.triton tune FILE`
tunes exactly those keys (offline.py; `ktune tune --shapes FILE` refuses such lines and names that
command). Several processes may append to one file: each line is one write to a
file opened for appending, under an exclusive lock that also guards a new file's header."""

import fcntl
import os
import threading

HEADER = ("# keys ktune.triton.autotune served without a tuned config: KERNEL SHAPE DTYPE; tune them with "
          "`python -m ktune.triton tune THIS_FILE`\n")

_lock = threading.Lock()
_written = set()  # (file, line) pairs this process wrote


def key_line(kernel, shape, dtype):
    return f"{kernel} {shape} {dtype}\n"


def record_miss(path, kernel, shape, dtype):
    """Appends the key unless this process wrote it to `path` before; True when a line was written.
    An unwritable file raises OSError (the caller decides whether a miss record may fail a call)."""
    line = key_line(kernel, shape, dtype)
    ident = (os.path.realpath(path), line)
    with _lock:
        if ident in _written:
            return False
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_size == 0:
                os.write(fd, HEADER.encode())
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        _written.add(ident)
        return True


def read_keys(path):
    """The (kernel, shape, dtype) keys of a file, in file order, repeats dropped. BadInputError
    "FILE:LINE: ..." for a line that is not a key."""
    from ..errors import BadInputError
    keys, seen = [], set()
    with open(path) as f:
        for number, text in enumerate(f, 1):
            text = text.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()
            if len(parts) != 3:
                raise BadInputError(f"{path}:{number}: expected 'KERNEL SHAPE DTYPE', got {text!r}")
            if tuple(parts) not in seen:
                seen.add(tuple(parts))
                keys.append(tuple(parts))
    return keys
