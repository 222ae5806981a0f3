"""The structural-schema rules of apiextensions.k8s.io/v1, checked before a CRD leaves kubeloop.

kube-apiserver rejects a CRD whose `openAPIV3Schema` is not structural (apiextensions-apiserver's
`structuralschema` validation): every node has a `type` (except under
`x-kubernetes-int-or-string` / `x-kubernetes-preserve-unknown-fields`), no `$ref`, no type-bearing
`anyOf`/`allOf`/`oneOf`/`not`, `additionalProperties` only as a map's value schema and never next
to `properties`, `nullable` only with a type, no `uniqueItems: true`, list-map keys required or
defaulted, `metadata` restricted to `name`/`generateName`, no default at the root, and every
default valid for (and not pruned by) its schema. Checking here turns a 422 at install time into
an error that names the Python field. Pure (no pydantic), so it also checks hand-written schemas.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["SchemaError", "check_structural", "structural_problems"]


class SchemaError(ValueError):
    """A model or schema that cannot become a structural CRD schema; the message names the field."""


#: the OpenAPI v3 keywords a CRD schema may use (JSONSchemaProps), besides `x-kubernetes-*`
ALLOWED_KEYS = frozenset({
    "type", "format", "description", "properties", "required", "items", "additionalProperties",
    "enum", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
    "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
    "multipleOf", "nullable", "example", "externalDocs",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-validations",
})
TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_SCALARS = frozenset({"string", "integer", "number", "boolean"})


def check_structural(schema: Mapping[str, Any]) -> None:
    """Raise `SchemaError` listing every structural-schema rule `schema` (an openAPIV3Schema) breaks."""
    problems = structural_problems(schema)
    if problems:
        raise SchemaError("the CRD schema is not structural:\n  " + "\n  ".join(problems))


def structural_problems(schema: Mapping[str, Any]) -> list[str]:
    """Every structural-schema rule `schema` (an openAPIV3Schema, the root) breaks, one line each."""
    out: list[str] = []
    if not isinstance(schema, Mapping):
        return ["openAPIV3Schema: must be an object"]
    if schema.get("type") != "object":
        out.append("openAPIV3Schema.type: must be 'object' at the root")
    if "default" in schema:
        out.append("openAPIV3Schema.default: must not be set at the root")
    if schema.get("nullable"):
        out.append("openAPIV3Schema.nullable: must not be true at the root")
    _check(schema, "openAPIV3Schema", out, root=True)
    meta = (schema.get("properties") or {}).get("metadata")
    if isinstance(meta, Mapping):
        _check_metadata(meta, out)
    return out


def _check_metadata(meta: Mapping[str, Any], out: list[str]) -> None:
    path = "openAPIV3Schema.properties[metadata]"
    if meta.get("type") != "object":
        out.append(f"{path}.type: must be 'object'")
    extra = sorted(set(meta) - {"type", "properties", "description"})
    if extra:
        out.append(f"{path}: only type, properties (name, generateName) and description are allowed, not {extra}")
    for key, sub in (meta.get("properties") or {}).items():
        if key not in ("name", "generateName"):
            out.append(f"{path}.properties[{key}]: only name and generateName may be restricted")
        elif not isinstance(sub, Mapping) or sub.get("type") != "string" or "default" in sub:
            out.append(f"{path}.properties[{key}]: must be a string schema without a default")


def _check(node: Any, path: str, out: list[str], *, root: bool = False) -> None:
    if not isinstance(node, Mapping):
        out.append(f"{path}: must be a schema object")
        return
    for key in node:
        if key not in ALLOWED_KEYS:
            hint = " (inline the definition)" if key in ("$ref", "$defs", "definitions") else ""
            out.append(f"{path}: {key!r} is not allowed in a CRD schema{hint}")
    typ = node.get("type")
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    int_or_string = node.get("x-kubernetes-int-or-string")
    if preserve is not None and preserve is not True:
        out.append(f"{path}.x-kubernetes-preserve-unknown-fields: must be true or undefined")
    if int_or_string is not None and int_or_string is not True:
        out.append(f"{path}.x-kubernetes-int-or-string: must be true or undefined")
    if typ is None and not (preserve or int_or_string):
        out.append(f"{path}.type: must not be empty (unless x-kubernetes-preserve-unknown-fields or "
                   "x-kubernetes-int-or-string is true)")
    elif typ is not None and typ not in TYPES:
        out.append(f"{path}.type: {typ!r} is not one of {sorted(TYPES)}")
    if int_or_string and typ is not None:
        out.append(f"{path}.type: must be empty when x-kubernetes-int-or-string is true")
    if node.get("nullable") and typ is None:
        out.append(f"{path}.nullable: needs a type")
    if node.get("uniqueItems") is True:
        out.append(f"{path}.uniqueItems: cannot be true (use x-kubernetes-list-type: set)")
    props = node.get("properties")
    addl = node.get("additionalProperties")
    if props is not None and addl is not None:
        out.append(f"{path}: properties and additionalProperties are mutually exclusive")
    if isinstance(addl, bool):
        out.append(f"{path}.additionalProperties: must be a schema (use x-kubernetes-preserve-unknown-fields "
                   "for arbitrary fields)")
    if (props is not None or addl is not None) and typ not in ("object", None):
        out.append(f"{path}: properties/additionalProperties need type 'object'")
    if "items" in node and typ not in ("array", None):
        out.append(f"{path}.items: needs type 'array'")
    if typ == "array" and "items" not in node:
        out.append(f"{path}.items: must be set for type 'array'")
    for req in node.get("required") or ():
        if props is not None and req not in props and not preserve:
            out.append(f"{path}.required: {req!r} is not a property")
    _check_list_type(node, path, out)
    _check_enum(node, path, out)
    if "default" in node and not root:
        for problem in validate(node["default"], node, f"{path}.default"):
            out.append(problem)
    if isinstance(props, Mapping):
        for key, sub in props.items():
            _check(sub, f"{path}.properties[{key}]", out)
    if isinstance(addl, Mapping):
        _check(addl, f"{path}.additionalProperties", out)
    if "items" in node:
        _check(node["items"], f"{path}.items", out)


def _check_list_type(node: Mapping[str, Any], path: str, out: list[str]) -> None:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys")
    if list_type is None and keys is None:
        return
    if node.get("type") != "array":
        out.append(f"{path}.x-kubernetes-list-type: only allowed on arrays")
        return
    if list_type not in ("atomic", "set", "map"):
        out.append(f"{path}.x-kubernetes-list-type: must be atomic, set or map, not {list_type!r}")
    raw_items = node.get("items")
    items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
    if list_type == "set" and items.get("type") not in _SCALARS and items.get("x-kubernetes-map-type") != "atomic":
        out.append(f"{path}.items: a set's items must be scalars (or atomic)")
    if list_type == "map":
        if not keys:
            out.append(f"{path}.x-kubernetes-list-map-keys: must name at least one key for list-type map")
        if items.get("type") != "object":
            out.append(f"{path}.items.type: a list-type map's items must be objects")
        iprops = items.get("properties") or {}
        required = set(items.get("required") or ())
        for k in keys or ():
            sub = iprops.get(k)
            if not isinstance(sub, Mapping):
                out.append(f"{path}.x-kubernetes-list-map-keys: {k!r} is not a property of the items")
                continue
            if sub.get("type") not in _SCALARS:
                out.append(f"{path}.items.properties[{k}]: a map key must be a scalar")
            if k not in required and "default" not in sub:
                out.append(f"{path}.items.properties[{k}]: a map key must be required or have a default")
    elif keys is not None:
        out.append(f"{path}.x-kubernetes-list-map-keys: only allowed with x-kubernetes-list-type: map")


def _check_enum(node: Mapping[str, Any], path: str, out: list[str]) -> None:
    enum = node.get("enum")
    if enum is None:
        return
    if not isinstance(enum, list) or not enum:
        out.append(f"{path}.enum: must be a non-empty list")
        return
    bare = {k: v for k, v in node.items() if k not in ("enum", "default")}
    for i, value in enumerate(enum):
        out.extend(validate(value, bare, f"{path}.enum[{i}]"))


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,), "integer": (int,),
    "number": (int, float),
}


def validate(value: Any, schema: Mapping[str, Any], path: str) -> list[str]:
    """Why `value` does not satisfy `schema` (type, enum, bounds, lengths, pattern, required, unknown
    fields that pruning would drop); empty when it does. Used for defaults, which the API server
    validates and prunes in the same way when the CRD is created."""
    out: list[str] = []
    if value is None:
        if not schema.get("nullable"):
            out.append(f"{path}: null is not allowed (the schema is not nullable)")
        return out
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, int | str) or isinstance(value, bool):
            out.append(f"{path}: must be an integer or a string")
        return out
    typ = schema.get("type")
    if typ in _JSON_TYPES:
        ok = isinstance(value, _JSON_TYPES[typ]) and not (isinstance(value, bool) and typ in ("integer", "number"))
        if typ == "integer" and isinstance(value, float) and value.is_integer():
            ok = True
        if not ok:
            out.append(f"{path}: must be of type {typ}, got {type(value).__name__} {value!r}")
            return out
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and (value < lo or (schema.get("exclusiveMinimum") and value == lo)):
            out.append(f"{path}: {value} is below the minimum {lo}")
        if hi is not None and (value > hi or (schema.get("exclusiveMaximum") and value == hi)):
            out.append(f"{path}: {value} is above the maximum {hi}")
        mult = schema.get("multipleOf")
        if mult and not math.isclose(value / mult, round(value / mult)):
            out.append(f"{path}: {value} is not a multiple of {mult}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", math.inf):
            out.append(f"{path}: length {len(value)} is outside [{schema.get('minLength', 0)}, "
                       f"{schema.get('maxLength', 'inf')}]")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: {value!r} does not match {schema['pattern']!r}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", math.inf):
            out.append(f"{path}: {len(value)} items is outside [{schema.get('minItems', 0)}, "
                       f"{schema.get('maxItems', 'inf')}]")
        if isinstance(schema.get("items"), Mapping):
            for i, item in enumerate(value):
                out.extend(validate(item, schema["items"], f"{path}[{i}]"))
    if isinstance(value, dict):
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        for req in schema.get("required") or ():
            if req not in value:
                out.append(f"{path}.{req}: required")
        for key, item in value.items():
            if isinstance(props, Mapping) and key in props:
                out.extend(validate(item, props[key], f"{path}.{key}"))
            elif isinstance(addl, Mapping):
                out.extend(validate(item, addl, f"{path}.{key}"))
            elif not schema.get("x-kubernetes-preserve-unknown-fields"):
                out.append(f"{path}.{key}: unknown field (it would be pruned)")
    return out
