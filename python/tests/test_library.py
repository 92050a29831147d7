"""Finding the shared libraries: a clear error listing every place tried."""

import os
import pathlib
import shutil
import subprocess
import sys

import ktune


def test_versions_of_both_libraries_agree():
    from ktune import _abi
    assert ktune.version() == _abi.lookup_lib().ktune_version().decode()


def test_a_missing_library_names_every_place_tried(tmp_path):
    # A copy of the package far from any build tree, pointed at a library that does not exist.
    shutil.copytree(pathlib.Path(ktune.__file__).parent, tmp_path / "ktune")
    env = dict(os.environ, KTUNE_LIBRARY=str(tmp_path / "nowhere" / "libktune_runtime.so"), LD_LIBRARY_PATH="")
    code = ("import ktune\n"
            "try:\n    ktune.Runtime()\n"
            "except ktune.LibraryNotFoundError as e:\n    print('ERROR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert "ERROR cannot load libktune_runtime.so" in out.stdout
    assert str(tmp_path / "nowhere" / "libktune_runtime.so") in out.stdout
    assert "KTUNE_LIBRARY" in out.stdout
