"""Finding the `ktune` executable, for what the Python package asks of the command line (tuning):
$KTUNE_BIN, else the build tree of the checkout this package sits in (build/release first), else
<prefix>/bin of the install tree it was installed into, else `ktune` on $PATH. The error lists
every place tried."""

import os
import pathlib
import shutil

from .errors import LibraryNotFoundError


def _candidates():
    env = os.environ.get("KTUNE_BIN")
    if env:
        yield pathlib.Path(env)
    here = pathlib.Path(__file__).resolve().parent
    build = here.parent.parent / "build"
    if build.is_dir():
        for preset in sorted(build.iterdir(), key=lambda d: (d.name != "release", d.name)):
            yield preset / "cli" / "ktune"
    for up in here.parents:
        yield up / "bin" / "ktune"
    found = shutil.which("ktune")
    if found:
        yield pathlib.Path(found)


def ktune_executable():
    """The path of the `ktune` executable. LibraryNotFoundError when there is none."""
    tried = []
    for path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        tried.append(str(path))
    raise LibraryNotFoundError("cannot find the ktune executable; set KTUNE_BIN or build ktune "
                               "(scripts/build.sh). Tried: " + ", ".join(tried))
