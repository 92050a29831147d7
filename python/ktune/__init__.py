"""ktune for Python: look up the configs ktune tuned for a GPU, and launch the tuned kernels.

    import ktune
    ktune.query("gemm", "m=16,n=4096,k=4096", "bf16")      # -> dict (libktune.so)
    rt = ktune.Runtime()                                    # $KTUNE_DB, cuda:0 (libktune_runtime.so)
    rt.gemm(a, w, out)                                      # torch / CuPy / JAX CUDA tensors

`import ktune` imports no framework; `ktune.torch` registers the operators as PyTorch operators and has optimize(model).
"""

from .errors import (BadInputError, Error, LibraryNotFoundError, NoDeviceError, NotFoundError,
                     RuntimeFailure)
from .query import query
from .runtime import PlanInfo, Runtime

__version__ = "0.2.0"  # the package's (python/pyproject.toml); version() is the loaded library's

__all__ = ["__version__", "query", "Runtime", "PlanInfo", "Error", "BadInputError", "NotFoundError", "NoDeviceError",
           "RuntimeFailure", "LibraryNotFoundError", "version"]


def version():
    """The version of libktune_runtime.so this package loads."""
    from . import _abi
    return _abi.runtime_lib().ktune_runtime_version().decode()
