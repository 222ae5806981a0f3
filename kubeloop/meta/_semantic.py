"""Go's view of JSON values: when the API server sees two values as equal, and how it writes numbers.

Why: Python's ``==`` says ``1 == 1.0`` and ``True == 1``; the API server does not. kube-apiserver
decodes a JSON number as int64 when it is an integer literal that fits (``1``) and as float64
otherwise (``1.0``, ``1.5``, ``1e3``, ``10**20``), and compares objects with
``equality.Semantic.DeepEqual``, where int64 1 and float64 1.0 differ. So a write of ``1.0``
where ``1`` is stored is a change: ``metadata.generation`` is bumped and every
generation-predicate controller reconciles again. Whoever decides "unchanged" without asking the
server (the no-op apply skip, predicates, condition updates) must decide it the server's way.

Going the other way, Go's encoder writes a float64 with an integral value without a fraction
(float64 1.0 is written ``1``), so a value read from the server is never an integral float; a
typed model that turns it into one must write it back as the integer it read (`go_json_numbers`).

Pure functions over JSON-shaped values (``dict``/``list`` or any ``Mapping``/``Sequence``, such as
the cache's read-only views).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["go_json_numbers", "semantically_equal"]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_EXACT = (str, type(None))


def _number_class(value: int | float) -> tuple[type, int | float]:
    """(int or float, value) as kube-apiserver decodes the JSON Python writes for ``value``."""
    if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
        return float, float(value)  # too large for int64: apimachinery falls back to float64
    return type(value), value


def semantically_equal(a: Any, b: Any) -> bool:
    """True if the API server would see ``a`` and ``b`` as the same JSON value.

    Unlike ``==``: an integer and a float are different values (``1`` vs ``1.0``), a bool is not
    a number (``True`` vs ``1``), ``None`` (JSON null) is a value, so a map holding a null is not
    a map without that key, and the order of list items matters. Maps compare by keys whatever
    their Python type, as do lists and tuples.
    """
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is tb and ta in _EXACT:
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return ta is tb and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        ca, va = _number_class(a)
        cb, vb = _number_class(b)
        return ca is cb and va == vb
    if isinstance(a, Mapping):
        if not isinstance(b, Mapping) or len(a) != len(b):
            return False
        for key, value in a.items():
            if key not in b or not semantically_equal(value, b[key]):
                return False
        return True
    if isinstance(a, str | bytes) or isinstance(b, str | bytes):
        return ta is tb and a == b
    if isinstance(a, Sequence):
        if not isinstance(b, Sequence) or isinstance(b, Mapping) or len(a) != len(b):
            return False
        return all(semantically_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def go_json_numbers(value: Any) -> Any:
    """``value`` with every float that has an integral value turned into that int, as Go writes it.

    A JSON-ready structure in, the same structure out (new dicts and lists only where something
    changed). Floats outside int64 keep their type: kube-apiserver decodes such a number as
    float64 however it is written (Go writes those below 1e21 as digits, those above in exponent
    form), and an integer past 64 bits cannot be encoded by orjson. So this is also what an
    object becomes once the server has encoded it and decoded it again. NaN and infinities are
    not JSON and are left to the encoder.
    """
    if type(value) is float:
        if value.is_integer() and _INT64_MIN <= value <= _INT64_MAX:
            return int(value)
        return value
    if isinstance(value, dict):
        out = {k: go_json_numbers(v) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out
    if isinstance(value, list):
        items = [go_json_numbers(v) for v in value]
        return value if all(x is y for x, y in zip(items, value, strict=True)) else items
    return value
