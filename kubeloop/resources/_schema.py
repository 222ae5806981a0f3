"""pydantic's JSON Schema (2020-12) -> a structural OpenAPI v3 schema for a CRD.

pydantic already knows every field's type, constraints, default, alias and docstring; this module
only rewrites its dialect into the one kube-apiserver accepts: definitions inlined (`$ref` is not
allowed), `X | None` becomes `X` (the API server drops nulls of non-nullable fields), `int | str`
becomes `x-kubernetes-int-or-string`, `Any` and `dict[str, Any]` preserve unknown fields, sets
become `x-kubernetes-list-type: set`, numeric `exclusiveMinimum` becomes OpenAPI 3.0's boolean
form. Anything without a structural equivalent (unions of several types, tuples with positions,
recursive models) is a `SchemaError` naming the field, never a silently looser schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.meta import without_nulls

from ._structural import ALLOWED_KEYS, SchemaError

__all__ = ["to_structural"]

#: JSON Schema keywords that carry no validation a CRD could express; dropped
_DROP = frozenset({"title", "examples", "$schema", "readOnly", "writeOnly", "deprecated", "$comment", "$id"})
#: `format`s kube-openapi knows and pydantic emits with the same meaning; others are dropped
_FORMATS = frozenset({"date-time", "date", "email", "uuid", "ipv4", "ipv6", "uri", "hostname", "byte",
                      "password", "int32", "int64", "float", "double"})


def to_structural(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Convert a pydantic `model_json_schema(by_alias=True)` result into a structural schema."""
    defs = schema.get("$defs") or {}
    body = {k: v for k, v in schema.items() if k != "$defs"}
    return _convert(body, defs, "", frozenset())


def _where(path: str) -> str:
    return f"field {path!r}" if path else "the model"


def _convert(node: Any, defs: Mapping[str, Any], path: str, seen: frozenset[str]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        raise SchemaError(f"{_where(path)}: unexpected schema {node!r}")
    if "$ref" in node:
        ref = node["$ref"]
        name = ref.rpartition("/")[2]
        if name in seen:
            raise SchemaError(f"{_where(path)}: the model {name} refers to itself; structural schemas cannot "
                              "be recursive (use Any or dict[str, Any] for the recursive part)")
        if name not in defs:
            raise SchemaError(f"{_where(path)}: unresolvable reference {ref!r}")
        out = _convert(defs[name], defs, path, seen | {name})
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        out.update(_convert_keys(siblings, defs, path, seen))
        return _finish(out, path)
    for combinator in ("anyOf", "oneOf"):
        if combinator in node:
            return _union(node, combinator, defs, path, seen)
    if "allOf" in node:
        parts = node["allOf"]
        if len(parts) != 1:
            raise SchemaError(f"{_where(path)}: allOf with several schemas has no structural equivalent")
        out = _convert(parts[0], defs, path, seen)
        out.update(_convert_keys({k: v for k, v in node.items() if k != "allOf"}, defs, path, seen))
        return _finish(out, path)
    return _finish(_convert_keys(node, defs, path, seen), path)


def _union(node: Mapping[str, Any], combinator: str, defs: Mapping[str, Any], path: str,
           seen: frozenset[str]) -> dict[str, Any]:
    options = [o for o in node[combinator] if not (isinstance(o, Mapping) and o.get("type") == "null")]
    rest = {k: v for k, v in node.items() if k != combinator}
    if len(options) == 1:
        out = _convert(options[0], defs, path, seen)
    elif sorted(o.get("type", "") for o in options if isinstance(o, Mapping)) == ["integer", "string"] \
            and all(set(o) == {"type"} for o in options):
        out = {"x-kubernetes-int-or-string": True}
    else:
        kinds = ", ".join(str(o.get("type") or o.get("$ref", "?").rpartition("/")[2]) for o in options)
        raise SchemaError(f"{_where(path)}: a union of {kinds} has no structural schema; use one type "
                          "(optional fields are fine: X | None), int | str, or Any")
    out.update(_convert_keys(rest, defs, path, seen))
    return _finish(out, path)


def _convert_keys(node: Mapping[str, Any], defs: Mapping[str, Any], path: str,
                  seen: frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key == "properties":
            out["properties"] = {name: _convert(sub, defs, f"{path}.{name}" if path else name, seen)
                                 for name, sub in value.items()}
        elif key == "items":
            if not isinstance(value, Mapping):
                raise SchemaError(f"{_where(path)}: array items must be one schema")
            out["items"] = _convert(value, defs, f"{path}[]", seen)
        elif key == "prefixItems":
            raise SchemaError(f"{_where(path)}: fixed-length tuples have no structural schema; use "
                              "tuple[X, ...] or list[X]")
        elif key == "additionalProperties":
            if value is True:
                out["x-kubernetes-preserve-unknown-fields"] = True
            elif isinstance(value, Mapping):
                out["additionalProperties"] = _convert(value, defs, f"{path}[*]", seen)
            # False (extra="forbid"): the API server prunes unknown fields anyway
        elif key == "const":
            out["enum"] = [value]
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
            out["minimum" if key == "exclusiveMinimum" else "maximum"] = value
            out[key] = True
        elif key == "format":
            if value in _FORMATS:
                out["format"] = value
        elif key == "uniqueItems":
            if value:
                out.setdefault("x-kubernetes-list-type", "set")
        elif key == "default":
            if value is not None:
                out["default"] = without_nulls(value)
        elif key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if len(types) != 1:
                raise SchemaError(f"{_where(path)}: several types {value} have no structural schema")
            out["type"] = types[0]
        elif key == "type" and value == "null":
            raise SchemaError(f"{_where(path)}: a field that can only be None has no schema")
        elif key in ALLOWED_KEYS:
            out[key] = value
        else:
            raise SchemaError(f"{_where(path)}: JSON Schema keyword {key!r} has no CRD equivalent")
    return out


def _finish(out: dict[str, Any], path: str) -> dict[str, Any]:
    if out.get("x-kubernetes-preserve-unknown-fields") and "properties" not in out:
        out.pop("additionalProperties", None)
    if "type" not in out and not out.get("x-kubernetes-int-or-string"):
        # Any: whatever JSON the user sends is kept as is
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out
