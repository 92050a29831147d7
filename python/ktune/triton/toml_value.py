"""Python values written as TOML, for the files ktune reads: a description (description.py) and its
cubin index (cubin_index.py)."""

import json
from typing import Mapping

from ..errors import BadInputError


def toml_value(value):
    """A TOML value: strings, integers, floats, booleans, lists and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise BadInputError(f"cannot write {value!r} as TOML")
