"""ktune.query: the best tuned config of a key, from a ktune database (libktune.so) or from a
`ktune serve` URL (GET /v1/best, docs/service.md)."""

import ctypes as C
import json
import urllib.error
import urllib.parse
import urllib.request

from . import _abi
from .errors import BadInputError, NoDeviceError, NotFoundError, RuntimeFailure
from .tensors import dtype_name

# The exception of each status `ktune serve` answers a lookup with, as `ktune query --server` maps
# them to exit codes (400 bad input, 404 not found, 503 unavailable); any other status is a failure.
_BY_STATUS = {400: BadInputError, 404: NotFoundError, 503: NoDeviceError}


def _shape_text(shape):
    if isinstance(shape, str):
        return shape
    if isinstance(shape, dict):
        return ",".join(f"{k}={int(v)}" for k, v in shape.items())
    raise BadInputError(f"shape must be a string like 'm=16,n=4096,k=4096' or a dict, not {type(shape).__name__}")


def _text(value, name):
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInputError(f"{name} must be a string, not {type(value).__name__}")
    return value.encode()


def query(kernel, shape, dtype, layout=None, gpu=None, db=None, fallback=True, server=None, timeout=10.0):
    """The best config of (gpu, kernel, shape, dtype, layout) as a dict: the document
    `ktune query --json` prints (config_name, config, median_us, tuned_shape, fallback, ...).

    gpu None: the database's only GPU. db None: $KTUNE_DB, else ~/.cache/ktune/ktune.db.
    fallback: answer an untuned shape with the nearest tuned one ("fallback": True says so).
    server: a `ktune serve` URL ("http://host:8787") asked instead of a database file (db must then
    be None); `timeout` bounds that request, in seconds.
    Raises NotFoundError (no database, nothing tuned), BadInputError, RuntimeFailure (the server
    cannot be reached, or answers with an error), NoDeviceError (503).
    """
    if server is not None:
        if db is not None:
            raise BadInputError(f"ask a database (db={db!r}) or a server (server={server!r}), not both")
        return query_server(server, kernel, shape, dtype, layout=layout, gpu=gpu, fallback=fallback,
                            timeout=timeout)
    lib = _abi.lookup_lib()
    handle = C.c_void_p()
    _abi.check(lib.ktune_open(_text(db, "db"), C.byref(handle)), lib, "ktune_last_error")
    try:
        out = C.c_void_p()
        code = lib.ktune_lookup(handle, _text(gpu, "gpu"), _text(kernel, "kernel"),
                                _shape_text(shape).encode(), dtype_name(dtype).encode(), _text(layout, "layout"),
                                1 if fallback else 0, C.byref(out))
        _abi.check(code, lib, "ktune_last_error")
        try:
            return json.loads(C.string_at(out.value).decode())
        finally:
            lib.ktune_free_string(out)
    finally:
        lib.ktune_close(handle)


def _server_url(server):
    parts = urllib.parse.urlsplit(server) if isinstance(server, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadInputError(f"server {server!r} is not the http:// or https:// URL of `ktune serve` "
                            "(e.g. http://127.0.0.1:8787)")
    return server.rstrip("/")


def query_server(server, kernel, shape, dtype, layout=None, gpu=None, fallback=True, timeout=10.0):
    """query() asked of `ktune serve` at `server`: `GET /v1/best` (docs/service.md, "Lookups"). Its
    answer is the same document; a 404 (nothing tuned) is NotFoundError, a 400 BadInputError, any
    other error status or an unreachable server RuntimeFailure, each with the server's message."""
    params = [("kernel", _text(kernel, "kernel").decode()), ("shape", _shape_text(shape)),
              ("dtype", dtype_name(dtype))]
    if layout is not None:
        params.append(("layout", _text(layout, "layout").decode()))
    if gpu is not None:
        params.append(("gpu", _text(gpu, "gpu").decode()))
    if not fallback:
        params.append(("fallback", "false"))
    target = "/v1/best?" + "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in params)
    url = _server_url(server) + target
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            body = answer.read()
    except urllib.error.HTTPError as e:
        raise _BY_STATUS.get(e.code, RuntimeFailure)(
            f"{_error_message(e)} (server {server}, HTTP {e.code})") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise RuntimeFailure(f"cannot reach ktune serve at {server} (GET /v1/best): {reason}") from None
    try:
        return json.loads(body)
    except ValueError:
        raise RuntimeFailure(f"{server} answered GET /v1/best with something that is not JSON: "
                             f"{body[:200]!r}") from None


def _error_message(e):
    """The message of `ktune serve`'s error document, else the status's reason and the body's start."""
    body = e.read()
    try:
        return json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return f"{e.reason}: {body[:200].decode('utf-8', 'replace')}".rstrip(": ")
