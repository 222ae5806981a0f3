"""Structural OpenAPI v3 schemas of CustomResourceDefinitions: pruning, defaulting, validation.

What kube-apiserver's apiextensions does to a custom resource body: unknown fields are dropped
(unless `x-kubernetes-preserve-unknown-fields`), `null` in non-nullable fields is dropped,
`default`s are filled in, then the value is validated with the messages of kube-openapi
(`spec.size in body must be of type integer: "string"`, ...).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ..govalues import json_kind
from ..shapes import Cause, Obj
from . import meta as m

Schema = dict[str, Any]

#: ObjectMeta fields kept on custom resources (others are pruned)
META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields", "clusterName",
})


def _preserves(schema: Schema) -> bool:
    return bool(schema.get("x-kubernetes-preserve-unknown-fields"))


def _item_schemas(schema: Schema) -> Schema | None:
    items = schema.get("items")
    return items if isinstance(items, dict) else None


def prune(value: Any, schema: Schema | None, root: bool = False) -> Any:
    """Drop fields the schema does not know and nulls it does not allow; returns the kept value."""
    if schema is None:
        return value
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource"):
            _prune_meta(value)
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        for key in list(value):
            if root and key in ("apiVersion", "kind"):
                continue
            if root and key == "metadata":
                if isinstance(value[key], dict):
                    _prune_meta(value[key])
                continue
            if schema.get("x-kubernetes-embedded-resource") and key in ("apiVersion", "kind", "metadata"):
                continue
            sub: Schema | None = None
            if isinstance(props, dict) and key in props:
                sub = props[key]
            elif isinstance(addl, dict):
                sub = addl
            elif addl is True or _preserves(schema):
                continue
            else:
                del value[key]
                continue
            if value[key] is None and not (sub or {}).get("nullable"):
                del value[key]
                continue
            value[key] = prune(value[key], sub)
        return value
    if isinstance(value, list):
        items = _item_schemas(schema)
        if items is not None:
            for i, v in enumerate(value):
                value[i] = prune(v, items)
        return value
    return value


def _prune_meta(meta: Obj) -> None:
    for key in list(meta):
        if key not in META_FIELDS:
            del meta[key]


def apply_defaults(value: Any, schema: Schema | None) -> None:
    """Fill in `default`s of missing properties (recursively, also inside array items)."""
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if key not in value and isinstance(sub, dict) and "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
            for key, sub in props.items():
                if key in value:
                    apply_defaults(value[key], sub)
        addl = schema.get("additionalProperties")
        if isinstance(addl, dict):
            for key, v in value.items():
                if not (isinstance(props, dict) and key in props):
                    apply_defaults(v, addl)
    elif isinstance(value, list):
        items = _item_schemas(schema)
        if items is not None:
            for v in value:
                apply_defaults(v, items)


# -- validation ---------------------------------------------------------------------------------

_OPENAPI_TYPES = {"null": "null", "bool": "boolean", "int": "integer", "float": "number", "string": "string",
                  "array": "array", "object": "object"}


def json_type(value: Any) -> str:
    """The OpenAPI type of a decoded value; an integral float is an integer, as schema validation sees it."""
    kind = json_kind(value)
    if kind == "float" and value.is_integer():
        return "integer"
    return _OPENAPI_TYPES[kind]


def _type_ok(value: Any, want: str) -> bool:
    got = json_type(value)
    return got == want or (want == "number" and got == "integer")


def _num(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return json.dumps(v)


def validate(value: Any, schema: Schema | None, path: str) -> list[Cause]:
    """kube-openapi validation of `value` at `path` (a field path like `spec.size`)."""
    if not isinstance(schema, dict):
        return []
    causes: list[Cause] = []
    shown = path or "<nil>"
    want = schema.get("type")
    if value is None:
        if schema.get("nullable"):
            return []
        if want:
            return [m.cause_type_invalid(path, "null", f"{shown} in body must be of type {want}: \"null\"")]
        return []
    if schema.get("x-kubernetes-int-or-string"):
        if json_type(value) not in ("integer", "string"):
            causes.append(m.cause_type_invalid(
                path, json_type(value), f"{shown} in body must be of type integer,string: \"{json_type(value)}\""))
            return causes
    elif want and not _type_ok(value, want):
        return [m.cause_type_invalid(path, json_type(value),
                                     f"{shown} in body must be of type {want}: \"{json_type(value)}\"")]
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        causes.append(m.not_supported_cause(path, value, [e if isinstance(e, str) else json.dumps(e) for e in enum]))
    if isinstance(value, int | float) and not isinstance(value, bool):
        causes += _validate_number(value, schema, path, shown)
    elif isinstance(value, str):
        causes += _validate_string(value, schema, path, shown)
    elif isinstance(value, list):
        causes += _validate_array(value, schema, path, shown)
    elif isinstance(value, dict):
        causes += _validate_object(value, schema, path, shown)
    return causes


def _validate_number(value: float, schema: Schema, path: str, shown: str) -> list[Cause]:
    causes: list[Cause] = []
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if isinstance(lo, int | float):
        if schema.get("exclusiveMinimum") and value <= lo:
            causes.append(m.invalid_cause(path, value, f"{shown} in body should be greater than {_num(lo)}"))
        elif value < lo:
            causes.append(m.invalid_cause(path, value, f"{shown} in body should be greater than or equal to {_num(lo)}"))
    if isinstance(hi, int | float):
        if schema.get("exclusiveMaximum") and value >= hi:
            causes.append(m.invalid_cause(path, value, f"{shown} in body should be less than {_num(hi)}"))
        elif value > hi:
            causes.append(m.invalid_cause(path, value, f"{shown} in body should be less than or equal to {_num(hi)}"))
    mult = schema.get("multipleOf")
    if isinstance(mult, int | float) and mult and (value / mult) != int(value / mult):
        causes.append(m.invalid_cause(path, value, f"{shown} in body should be a multiple of {_num(mult)}"))
    return causes


def _validate_string(value: str, schema: Schema, path: str, shown: str) -> list[Cause]:
    causes: list[Cause] = []
    max_len, min_len = schema.get("maxLength"), schema.get("minLength")
    if isinstance(max_len, int) and len(value) > max_len:
        causes.append(m.cause_too_long(path, f"may not be longer than {max_len}"))
    if isinstance(min_len, int) and len(value) < min_len:
        causes.append(m.invalid_cause(path, value, f"{shown} in body should be at least {min_len} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, value):
                causes.append(m.invalid_cause(path, value, f"{shown} in body should match '{pattern}'"))
        except re.error:
            pass
    return causes


def _validate_array(value: list[Any], schema: Schema, path: str, shown: str) -> list[Cause]:
    causes: list[Cause] = []
    max_items, min_items = schema.get("maxItems"), schema.get("minItems")
    if isinstance(max_items, int) and len(value) > max_items:
        causes.append(m.cause_too_many(path, len(value), max_items))
    if isinstance(min_items, int) and len(value) < min_items:
        causes.append(m.invalid_cause(path, len(value), f"{shown} in body should have at least {min_items} items"))
    items = _item_schemas(schema)
    for i, v in enumerate(value):
        causes += validate(v, items, f"{path}[{i}]")
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set" or schema.get("uniqueItems"):
        seen: list[Any] = []
        for i, v in enumerate(value):
            if v in seen:
                causes.append(m.duplicate_cause(f"{path}[{i}]", v))
            seen.append(v)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys: list[tuple[Any, ...]] = []
        for i, v in enumerate(value):
            if isinstance(v, dict):
                k = tuple(v.get(key) for key in keys)
                if k in seen_keys:
                    causes.append(m.duplicate_cause(f"{path}[{i}]", {key: v.get(key) for key in keys}))
                seen_keys.append(k)
    return causes


def _validate_object(value: Obj, schema: Schema, path: str, shown: str) -> list[Cause]:
    causes: list[Cause] = []
    for req in schema.get("required") or []:
        if req not in value:
            causes.append(m.required_cause(f"{path}.{req}" if path else req))
    max_p, min_p = schema.get("maxProperties"), schema.get("minProperties")
    if isinstance(max_p, int) and len(value) > max_p:
        causes.append(m.cause_too_many(path, len(value), max_p))
    if isinstance(min_p, int) and len(value) < min_p:
        causes.append(m.invalid_cause(path, len(value), f"{shown} in body should have at least {min_p} properties"))
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    addl = schema.get("additionalProperties")
    for key, v in value.items():
        sub = props.get(key) if props else None
        if sub is None and isinstance(addl, dict):
            sub = addl
        if sub is not None:
            causes += validate(v, sub, f"{path}.{key}" if path else key)
    for comb in ("allOf", "anyOf", "oneOf"):
        subs = schema.get(comb)
        if not isinstance(subs, list):
            continue
        results = [validate(value, s, path) for s in subs if isinstance(s, dict)]
        if comb == "allOf":
            for r in results:
                causes += r
        elif comb == "anyOf" and results and all(results):
            causes.append(m.invalid_cause(path, value, f"{shown} in body must be of type anyOf"))
    return causes


def validate_root(obj: Obj, schema: Schema | None) -> list[Cause]:
    """Validate a whole custom resource (apiVersion, kind and metadata are checked elsewhere)."""
    if not isinstance(schema, dict):
        return []
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    reduced = dict(schema)
    props = dict(reduced.get("properties") or {})
    for k in ("apiVersion", "kind", "metadata"):
        props.pop(k, None)
    reduced["properties"] = props
    reduced["required"] = [r for r in reduced.get("required") or [] if r not in ("apiVersion", "kind", "metadata")]
    return validate(body, reduced, "")
