"""ktune._native without torch: when the native operators are built, when not and what is said, the
header they include found, and the C++ source registering exactly the operators the Python side
leaves to it (each one defined with a schema in ktune/torch.py). The build and the kernels
themselves run on the GPU machine (test_torch_ops_gpu.py, KTUNE_TORCH_NATIVE=1)."""

import pathlib
import re
import types
import warnings

import pytest

from ktune import _native

ROOT = pathlib.Path(__file__).resolve().parents[2]


def fake_torch(cuda, device=True):
    return types.SimpleNamespace(version=types.SimpleNamespace(cuda=cuda),
                                 cuda=types.SimpleNamespace(is_available=lambda: device))


def test_zero_keeps_the_python_kernels(monkeypatch):
    monkeypatch.setenv("KTUNE_TORCH_NATIVE", "0")
    assert _native.load(fake_torch("13.0")) == "KTUNE_TORCH_NATIVE=0"


def test_a_torch_without_cuda_gets_the_python_kernels_without_a_warning(monkeypatch):
    monkeypatch.delenv("KTUNE_TORCH_NATIVE", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _native.load(fake_torch(None)) == "this torch has no CUDA"


def test_a_cuda_torch_without_a_device_builds_nothing_and_says_so_without_a_warning(monkeypatch):
    monkeypatch.delenv("KTUNE_TORCH_NATIVE", raising=False)
    monkeypatch.setattr(_native, "_header_dir", lambda: pytest.fail("looked for the header: a build was started"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _native.load(fake_torch("13.0", device=False)) == "no CUDA device is visible"
    monkeypatch.setenv("KTUNE_TORCH_NATIVE", "1")  # required: still an error, with the reason
    with pytest.raises(RuntimeError, match="required.*no CUDA device is visible"):
        _native.load(fake_torch("13.0", device=False))


def test_required_native_operators_that_cannot_be_had_raise_with_the_reason(monkeypatch):
    monkeypatch.setenv("KTUNE_TORCH_NATIVE", "1")
    with pytest.raises(RuntimeError, match="required.*this torch has no CUDA"):
        _native.load(fake_torch(None))


def test_a_failed_build_warns_and_names_why(monkeypatch):
    monkeypatch.setenv("KTUNE_TORCH_NATIVE", "auto")
    monkeypatch.setenv("KTUNE_INCLUDE", str(ROOT / "no-such-folder"))
    monkeypatch.setattr(_native, "_header_dir", lambda: None)
    with pytest.warns(UserWarning, match="ktune_runtime.h not found"):
        assert "ktune_runtime.h not found" in _native.load(fake_torch("13.0"))


def test_an_unknown_setting_is_refused(monkeypatch):
    monkeypatch.setenv("KTUNE_TORCH_NATIVE", "sometimes")
    with pytest.raises(ValueError, match="auto, 1 or 0"):
        _native.load(fake_torch("13.0"))


def test_the_header_is_found_in_the_repository(monkeypatch):
    monkeypatch.delenv("KTUNE_INCLUDE", raising=False)
    assert _native._header_dir() == ROOT / "include"


def test_the_source_registers_exactly_the_native_operators_each_with_a_schema():
    source = (ROOT / "python" / "ktune" / "csrc" / "torch_ops.cpp").read_text()
    block = source.split("TORCH_LIBRARY_IMPL(ktune, CUDA, m)", 1)[1]
    assert tuple(re.findall(r'm\.impl\("(\w+)"', block)) == _native.NATIVE_OPS
    schemas = (ROOT / "python" / "ktune" / "torch.py").read_text()
    for op in _native.NATIVE_OPS:
        assert re.search(rf'["\']{op}\(Tensor', schemas), f"ktune/torch.py defines no schema for {op}"


def test_every_native_door_the_runtime_calls_is_defined_by_the_module():
    """ktune.Runtime calls its native doors as door.<name>(...) (ktune/_native.py's runtime_door); the
    source's Python module defines each of them."""
    source = (ROOT / "python" / "ktune" / "csrc" / "torch_ops.cpp").read_text()
    module = source.split("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)", 1)[1]
    defined = set(re.findall(r'm\.def\("(\w+)"', module))
    called = set(re.findall(r"\bdoor\.(\w+)\(", (ROOT / "python" / "ktune" / "runtime.py").read_text()))
    assert called and called <= defined, f"called {sorted(called)}, defined {sorted(defined)}"
