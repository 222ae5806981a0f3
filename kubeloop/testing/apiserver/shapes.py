"""The two JSON shapes passed through the whole emulator, named once.

`Obj` is a decoded Kubernetes object (or any JSON object in one); `Cause` is one field error in a
`Status`'s `details.causes` (reason, message, field).
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import orjson

Obj = dict[str, Any]
Cause = dict[str, str]
T = TypeVar("T")


def copy_json(value: T) -> T:
    """A deep copy of what orjson decoded, about 7x faster than `copy.deepcopy` (on every update path).

    For the views of stored objects (`Registry.view` decodes their stored bytes), where a round trip
    through orjson is exact. Not for values that JSON cannot hold as they are (NaN would become
    null, a tuple a list); what orjson refuses (an integer beyond 64 bits) takes `copy.deepcopy`.
    """
    try:
        copied: T = orjson.loads(orjson.dumps(value))
    except TypeError:  # orjson.JSONEncodeError: not plain JSON
        return copy.deepcopy(value)
    return copied
