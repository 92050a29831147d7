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


def _shared_library(tmp_path, name, *flags):
    """A one-function shared library (it calls libc's puts) built by the C compiler with `flags`."""
    import pytest
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc) to build the test libraries with")
    source = tmp_path / "one.c"
    source.write_text("#include <stdio.h>\nint ktune_test_one(const char* s) { return puts(s); }\n")
    out = tmp_path / name
    built = subprocess.run([cc, "-shared", "-fPIC", *flags, str(source), "-o", str(out)], capture_output=True,
                           text=True)
    if built.returncode != 0:
        pytest.skip(f"{cc} {' '.join(flags)} cannot build a shared library here: {built.stderr.strip()[-300:]}")
    return out


def test_a_library_built_with_address_sanitizer_is_told_from_its_needed_libraries(tmp_path):
    from ktune import _library
    plain = _shared_library(tmp_path, "libplain.so")
    asan = _shared_library(tmp_path, "libasan_built.so", "-fsanitize=address")
    with open(asan, "rb") as f:
        assert any(n.startswith(b"libasan.so") for n in _library._needed_libraries(f))
    with open(plain, "rb") as f:
        needed = _library._needed_libraries(f)
    assert needed and all(not n.startswith(b"libasan.so") for n in needed)  # libc
    assert _library._sanitized(asan) and not _library._sanitized(plain)
    from ktune import _abi
    assert not _library._sanitized(pathlib.Path(_abi.lookup_lib()._name))  # the library the tests load


def test_a_file_that_is_no_elf_library_is_searched_whole(tmp_path):
    from ktune import _library
    odd = tmp_path / "libodd.so"
    odd.write_bytes(b"not an ELF file, but it names libasan.so.8 somewhere")
    assert _library._sanitized(odd)
    odd.write_bytes(b"\x7fELF" + bytes(100))  # an ELF header that is not 64-bit little-endian
    assert not _library._sanitized(odd)
    assert not _library._sanitized(tmp_path / "missing.so")
