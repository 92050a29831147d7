"""Shared fixtures of the Python package's tests (run by ctest: `ktune_python_tests`).

KTUNE_TEST_DB / KTUNE_TEST_EXPECTED name the database and the expected answers that the C ABI's
fixture program (tests/capi/make_capi_fixture.cpp) wrote with a random seed."""

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))


class CudaArray:
    """A stand-in CUDA tensor: __cuda_array_interface__ only (no memory behind the pointer)."""

    def __init__(self, shape, typestr="<f2", ptr=0x7F0000000000, strides=None, itemsize=2):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, False), "version": 3,
            "strides": None if strides is None else tuple(s * itemsize for s in strides)}


@pytest.fixture
def expected():
    path = os.environ.get("KTUNE_TEST_EXPECTED")
    if not path:
        pytest.skip("KTUNE_TEST_EXPECTED is not set (run through ctest: ktune_python_tests)")
    return dict(line.split("=", 1) for line in pathlib.Path(path).read_text().split("\n") if "=" in line)


@pytest.fixture
def db():
    path = os.environ.get("KTUNE_TEST_DB")
    if not path:
        pytest.skip("KTUNE_TEST_DB is not set (run through ctest: ktune_python_tests)")
    return path
