"""Go's value semantics for decoded JSON: when two values are "the same", and how Go prints them.

Python's `==` says `1 == 1.0` and `True == 1`; kube-apiserver compares Go values, and which
comparison depends on where the values live:

- `GO`: `apiequality.Semantic.DeepEqual` on unstructured content (custom resources): an int64 is
  never equal to a float64, a bool never to a number, a key holding null is not an absent key and
  null is not `{}`. A custom resource's generation moves on any such difference. This is the
  runtime's `kubeloop.meta.semantically_equal`, the comparison a client must make too.
- `TYPED`: the same comparison on decoded Go structs (built-in kinds): a field has one type, so
  numbers compare as numbers, and an absent field, a null and an empty list or map are the one zero
  value (Semantic.DeepEqual takes a nil slice or map for an empty one).
- `SMD`: structured-merge-diff's `value.Equals` (managedFields, apply): int and float compare as
  numbers, bool is its own kind, null and absent differ.

What a value becomes once Go has encoded it and decoded it again (what an object read back from
etcd holds: a float with an integral value within int64 range comes back an int64) is
`kubeloop.meta.go_json_numbers`. The `sprint_*` functions print values as Go's `fmt` verbs do,
for error messages.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any

from kubeloop.meta import semantically_equal


class Mode(Enum):
    GO = "go"
    TYPED = "typed"
    SMD = "smd"


GO = Mode.GO
TYPED = Mode.TYPED
SMD = Mode.SMD


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _empty(v: Any) -> bool:
    return v is None or (isinstance(v, dict | list) and not v)


def equal(a: Any, b: Any, mode: Mode) -> bool:
    """Whether `a` and `b` are the same value under `mode` (see the module docstring)."""
    if mode is GO:
        return semantically_equal(a, b)
    if mode is TYPED and _empty(a) and _empty(b):
        return True
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return False
        if mode is TYPED:
            keys = set(a) | set(b)
            return all(equal(a.get(k), b.get(k), mode) for k in keys)
        return len(a) == len(b) and all(k in b and equal(v, b[k], mode) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            equal(x, y, mode) for x, y in zip(a, b, strict=True))
    if isinstance(b, dict | list):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and a == b


# ---- printing -------------------------------------------------------------------------------------------
def format_float_g(f: float) -> str:
    """Go's `strconv.FormatFloat(f, 'g', -1, 64)` (what `%v` prints for a float64): shortest digits,
    exponent form when the exponent is below -4 or at least 6 (`1e+06`, `1.234567e+06`, `123456`)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1, f) < 0 else "0"
    sign = "-" if f < 0 else ""
    digits, exp = _shortest(abs(f))
    x = exp - 1  # exponent of the first digit
    if x < -4 or x >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if x < 0:
        return sign + "0." + "0" * (-x - 1) + digits
    if len(digits) <= x + 1:
        return sign + digits + "0" * (x + 1 - len(digits))
    return sign + digits[:x + 1] + "." + digits[x + 1:]


def _shortest(f: float) -> tuple[str, int]:
    """The shortest round-trip decimal digits of `f` > 0, and the decimal point position."""
    mant, _, e = f"{f!r}".partition("e")
    int_part, _, frac = mant.partition(".")
    digits = (int_part + frac).lstrip("0")
    point = len(int_part) + (int(e) if e else 0)
    if int_part.strip("0") == "":  # 0.000123
        point -= len(frac) - len(frac.lstrip("0"))
        point -= len(int_part)
    digits = digits.rstrip("0") or "0"
    return digits, point


def sprint_v(value: Any) -> str:
    """`fmt.Sprint("%v")` of an unstructured value (maps as `map[k:v ...]`, keys sorted)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{sprint_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint_v(x) for x in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_float_g(value)
    return "<nil>" if value is None else str(value)


def sprint_sharp_v(value: Any) -> str:
    """`fmt.Sprintf("%#v")` of an unstructured value (`map[string]interface {}{"a":1}`)."""
    if isinstance(value, dict):
        return "map[string]interface {}{" + ", ".join(
            f'"{k}":{sprint_sharp_v(value[k])}' for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(sprint_sharp_v(x) for x in value) + "}"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is None:
        return "interface {}(nil)"
    return sprint_v(value)


def json_kind(value: Any) -> str:
    """The JSON kind of a decoded value: null, bool, int, float, string, array or object. The one
    type switch; each Go or OpenAPI vocabulary for type names is a table over these (`type_name`'s,
    `kinds.meta.GO_JSON_TYPES`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


#: `fmt.Sprintf("%T")` of each JSON kind of an unstructured value
_GO_TYPE_NAMES = {"null": "<nil>", "bool": "bool", "int": "int64", "float": "float64", "string": "string",
                  "array": "[]interface {}", "object": "map[string]interface {}"}


def type_name(value: Any) -> str:
    """`fmt.Sprintf("%T")` of an unstructured value."""
    return _GO_TYPE_NAMES[json_kind(value)]
