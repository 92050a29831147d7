"""The ctypes structs of ktune._abi against the C header they mirror (include/ktune/ktune_runtime.h):
a C program compiled here prints sizeof and the offset of every field ctypes declares, so a field
added, moved or retyped on one side only fails here, not as a crash in a launch."""

import ctypes as C
import pathlib
import shutil
import subprocess

import pytest

from ktune import _abi

HEADER = pathlib.Path(__file__).resolve().parents[2] / "include" / "ktune" / "ktune_runtime.h"
STRUCTS = {_abi.RuntimeOptions: "ktune_runtime_options", _abi.PlanInfo: "ktune_plan_info",
           **{cls: f"ktune_{op}_args" for op, cls in _abi.OPS.items()}}


def c_layout(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc or gcc) on PATH to read the header's layout")
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include \"ktune/ktune_runtime.h\"", "int main(void) {"]
    for cls, name in STRUCTS.items():
        lines.append(f'  printf("{name} sizeof %zu\\n", sizeof({name}));')
        for field, _ in cls._fields_:
            lines.append(f'  printf("{name} {field} %zu\\n", offsetof({name}, {field}));')
    lines += ["  return 0;", "}"]
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-I", str(HEADER.parents[1]), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_every_struct_matches_the_header(tmp_path):
    layout = c_layout(tmp_path)
    assert len(STRUCTS) >= 10
    for cls, name in STRUCTS.items():
        assert C.sizeof(cls) == layout[(name, "sizeof")], f"{cls.__name__}: size differs from {name}"
        for field, _ in cls._fields_:
            assert getattr(cls, field).offset == layout[(name, field)], f"{cls.__name__}.{field} is misplaced"


def test_the_package_version_is_pyprojects():
    import tomllib

    import ktune
    pyproject = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
    assert ktune.__version__ == tomllib.loads(pyproject.read_text())["project"]["version"]
