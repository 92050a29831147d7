"""ktune's exceptions: one class per kind of failure, carrying the command line's exit code."""


class Error(Exception):
    """A failure reported by ktune; `kind` names it and `code` is the matching exit code."""

    kind = "runtime"
    code = 1


class RuntimeFailure(Error):
    """Valid work that went wrong: a failed launch, an unreadable database, out of memory."""

    kind = "runtime"
    code = 1


class BadInputError(Error, ValueError):
    """A bad argument: a shape, dtype, stride, device or enum value the call cannot take."""

    kind = "bad_input"
    code = 2


class NoDeviceError(Error):
    """No GPU or CUDA driver where one is needed."""

    kind = "no_device"
    code = 3


class NotFoundError(Error, LookupError):
    """A look-up with no answer: no database, or nothing tuned for the key."""

    kind = "not_found"
    code = 4


class LibraryNotFoundError(Error, OSError):
    """libktune.so or libktune_runtime.so could not be found or loaded."""

    kind = "no_library"
    code = 1


_BY_CODE = {1: RuntimeFailure, 2: BadInputError, 3: NoDeviceError, 4: NotFoundError}


def from_code(code: int, message: str) -> Error:
    """The exception of a KTUNE_ERR_* return code."""
    return _BY_CODE.get(code, RuntimeFailure)(message)
