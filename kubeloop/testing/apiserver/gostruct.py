"""Go's `%#v` of a typed API value, for the validation messages that print one
(`spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sideways",
RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}`).

kube-apiserver validates its *internal* types (`k8s.io/kubernetes/pkg/apis/apps`, ...), so a value
is printed with the internal type's fields, in declaration order, whatever the request carried
(unset fields print their zero value). The layouts come from the 1.24 source
(`data/api-facts.json.gz`, `go_structs`); values are given as the decoded JSON the client sent.
Pointers inside a value print as `(*T)(0xc000010000)` (the address is the real server's business).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import cache
from typing import Any

from .openapi import builtin_spec

_BUILTINS = frozenset({"string", "bool", "int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                       "uint64", "byte", "float32", "float64"})
_ADDRESS = "0xc000010000"
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_TIME = {"k8s.io/apimachinery/pkg/apis/meta/v1.Time", "k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime"}
_INTSTR = "k8s.io/apimachinery/pkg/util/intstr.IntOrString"


@cache
def _layouts() -> dict[str, list[list[str]]]:
    return dict(builtin_spec().go_structs)


def short(qualified: str) -> str:
    """`k8s.io/kubernetes/pkg/apis/apps.DaemonSet` -> `apps.DaemonSet` (what reflection prints)."""
    if qualified in _BUILTINS:
        return qualified
    pkg, _, name = qualified.rpartition(".")
    return f"{pkg.rsplit('/', 1)[-1]}.{name}" if pkg else name


def type_string(go: str) -> str:
    """A qualified type expression as `%#v` writes it (`[]*v1.Container`, `map[string]string`)."""
    if go.startswith("*"):
        return "*" + type_string(go[1:])
    if go.startswith("[]"):
        return "[]" + type_string(go[2:])
    m = re.match(r"map\[([^\]]+)\](.*)", go)
    if m:
        return f"map[{type_string(m.group(1))}]{type_string(m.group(2))}"
    if go == "interface{}":
        return "interface {}"
    return short(go)


def quote(s: str) -> str:
    """Go's `strconv.Quote` (`%q`) for the strings API values hold."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif not ch.isprintable():
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def sprint(go: str, value: Any, top: bool = True) -> str:
    """`fmt.Sprintf("%#v", v)` of the Go value of type `go` (a qualified type expression) that the
    decoded JSON `value` holds; `top`: the value itself rather than one inside another."""
    if go.startswith("*"):
        inner = go[1:]
        if value is None:
            return f"({type_string(go)})(nil)"
        if top and _layouts().get(inner) is not None:
            return "&" + sprint(inner, value)
        return f"({type_string(go)})({_ADDRESS})"
    if go.startswith("[]"):
        if value is None:
            return f"{type_string(go)}(nil)"
        items = value if isinstance(value, list) else []
        return type_string(go) + "{" + ", ".join(sprint(go[2:], x, False) for x in items) + "}"
    m = re.match(r"map\[([^\]]+)\](.*)", go)
    if m:
        if value is None:
            return f"{type_string(go)}(nil)"
        entries = value if isinstance(value, dict) else {}
        return type_string(go) + "{" + ", ".join(
            f"{sprint(m.group(1), k, False)}:{sprint(m.group(2), entries[k], False)}" for k in sorted(entries)) + "}"
    if go == _INTSTR:
        if isinstance(value, str):
            return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{quote(value)}}}"
        return f"intstr.IntOrString{{Type:0, IntVal:{int(value or 0)}, StrVal:\"\"}}"
    if go in _TIME:
        return f"{short(go)}{{Time:{_go_time(value)}}}"
    layout = _layouts().get(go)
    if layout is not None:
        return _struct(go, layout, value if isinstance(value, dict) else {})
    return _scalar(go, value)


def _scalar(go: str, value: Any) -> str:
    """A builtin or a named non-struct type (a string, number or bool underneath)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(int(value)) if isinstance(value, int) or value.is_integer() else repr(value)
    if isinstance(value, str):
        return quote(value)
    if value is None:
        base = go.rpartition(".")[2] if "." in go else go
        if base in ("bool",):
            return "false"
        if base in _BUILTINS and base != "string":
            return "0"
        return '""'
    return quote(str(value))


def _struct(go: str, layout: list[list[str]], value: dict[str, Any]) -> str:
    lowered = {k.lower(): k for k in value}
    parts: list[str] = []
    for go_name, field_type, json_name, *flags in layout:
        if go_name == "TypeMeta":
            sub: Any = {"kind": value.get("kind", ""), "apiVersion": value.get("apiVersion", "")}
        elif go_name in ("ObjectMeta", "ListMeta"):
            sub = value.get("metadata")
        elif "embedded" in flags:
            sub = value  # an embedded struct: its fields are inline in the JSON
        elif json_name in value:
            sub = value[json_name]
        elif go_name.lower() in lowered:
            sub = value[lowered[go_name.lower()]]
        else:
            sub = None
        parts.append(f"{go_name}:{sprint(field_type, sub, False)}")
    return short(go) + "{" + ", ".join(parts) + "}"


def _go_time(value: Any) -> str:
    """`%#v` of a `time.Time` decoded from an RFC 3339 string (UTC, as the server parses `Z`)."""
    if not isinstance(value, str) or not value:
        return "time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)"
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return "time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)"
    return (f"time.Date({dt.year}, time.{_MONTHS[dt.month - 1]}, {dt.day}, {dt.hour}, {dt.minute}, {dt.second}, "
            f"{dt.microsecond * 1000}, time.UTC)")


#: internal packages, by the group of the API they serve
INTERNAL = {"": "k8s.io/kubernetes/pkg/apis/core", "apps": "k8s.io/kubernetes/pkg/apis/apps",
            "batch": "k8s.io/kubernetes/pkg/apis/batch", "policy": "k8s.io/kubernetes/pkg/apis/policy",
            "networking.k8s.io": "k8s.io/kubernetes/pkg/apis/networking",
            "rbac.authorization.k8s.io": "k8s.io/kubernetes/pkg/apis/rbac",
            "autoscaling": "k8s.io/kubernetes/pkg/apis/autoscaling",
            "discovery.k8s.io": "k8s.io/kubernetes/pkg/apis/discovery",
            "coordination.k8s.io": "k8s.io/kubernetes/pkg/apis/coordination"}
META = "k8s.io/apimachinery/pkg/apis/meta/v1"


def internal(group: str, name: str) -> str:
    """The qualified internal type `name` of an API group (`internal("apps", "DaemonSetSpec")`)."""
    return f"{INTERNAL[group]}.{name}"


#: the types `field.Error` prints with `%v` (any other value, named string types included, with `%#v`)
_SIMPLE = frozenset({"int64", "int32", "float64", "float32", "bool"})


def field_value(go: str, value: Any) -> str:
    """How `field.Error.ErrorBody` shows a bad value of Go type `go` (`field.Invalid(path, v, ...)`):
    a nil pointer as `"null"`, other pointers dereferenced once, `int32`/`int64`/`bool` plain, a
    `string` quoted, anything else (structs, named types, `int`) with `%#v`."""
    if go.startswith("*"):
        if value is None:
            return '"null"'  # ErrorBody turns a nil pointer into the string "null", then quotes it
        go = go[1:]
    if go in _SIMPLE:
        return _scalar(go, value)
    if go == "string":
        return quote(value if isinstance(value, str) else "")
    return sprint(go, value)


# ---- JSON as Go's encoder writes it ---------------------------------------------------------------

_FIELDS_V1 = "k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1"
_HTML_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                               "\u2029": "\\u2029"})


def versioned(group: str, version: str, kind: str) -> str:
    """The qualified versioned Go type of a built-in kind (`k8s.io/api/apps/v1.Deployment`)."""
    return f"k8s.io/api/{group.split('.', 1)[0] or 'core'}/{version}.{kind}"


def go_json(go: str, value: Any, parsed: frozenset[tuple[str, ...]] = frozenset()) -> str:
    """Compact JSON of `value` in the key order Go writes: a struct's fields in declaration order,
    a map's keys sorted. `parsed`: paths of objects that were decoded into maps on the way (those a
    JSON patch or merge patch walked through, whose keys are then written sorted whatever their
    type), the rest keeping the typed encoder's order, as a patched document's untouched raw
    parts do."""
    return _encode(go, value, (), parsed)


def _encode(go: str, value: Any, path: tuple[str, ...], parsed: frozenset[tuple[str, ...]]) -> str:
    go = go.lstrip("*")
    if isinstance(value, dict):
        layout = None if path in parsed or go == _FIELDS_V1 else _layouts().get(go)
        if layout is None:
            m = re.match(r"map\[[^\]]+\](.*)", go)
            types = {k: m.group(1) for k in value} if m else _field_types(go)
            keys = sorted(value)
        else:
            keys, types = _struct_keys(layout, value), _field_types(go)
        return "{" + ",".join(f"{_string(k)}:{_encode(types.get(k, ''), value[k], (*path, k), parsed)}"
                              for k in keys) + "}"
    if isinstance(value, list):
        elem = go[2:] if go.startswith("[]") else ""
        return "[" + ",".join(_encode(elem, x, (*path, str(i)), parsed) for i, x in enumerate(value)) + "]"
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False).translate(_HTML_ESCAPES)


def _field_types(go: str) -> dict[str, str]:
    """JSON name -> Go type of a struct's fields, inline (embedded) structs' included."""
    out: dict[str, str] = {}
    for _go_name, field_type, json_name, *_flags in _layouts().get(go) or ():
        if not json_name:
            out.update(_field_types(field_type.lstrip("*")))
        else:
            out[json_name] = field_type
    return out


def _struct_keys(layout: list[list[str]], value: dict[str, Any]) -> list[str]:
    order: list[str] = []

    def walk(fields: list[list[str]]) -> None:
        for _go_name, field_type, json_name, *_flags in fields:
            if not json_name:
                walk(_layouts().get(field_type.lstrip("*")) or [])
            elif json_name in value:
                order.append(json_name)

    walk(layout)
    known = set(order)
    return order + sorted(k for k in value if k not in known)
