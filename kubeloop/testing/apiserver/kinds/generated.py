"""Typed descriptions of the built-in kinds, generated from the recorded OpenAPI document and the
Go field facts beside it (`openapi.builtin_spec()`), in the `schema.py` vocabulary the decoder
walks.

kube-apiserver decodes a body into the kind's Go struct: fields the struct does not have are
dropped, a value of the wrong JSON type is a 400 naming the Go type, and encoding the struct back
writes what Go's `encoding/json` writes: `omitempty` zero values left out, but every non-pointer
struct written (`resources: {}`, `status: {}`, a zero `metav1.Time` as `null`), and fields without
`omitempty` written even when unset (`""`, `0`, `null`). A generated `Struct` carries all of it:
the declared fields, each field's Go type (for messages), whether its zero value is dropped, and
the value Go writes for it when a body leaves it out (`Struct.fills`).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ..openapi import V2_PREFIX, builtin_spec
from .schema import NO_FILL, Collection, Node, Struct

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
#: definitions that are scalars on the wire, with their kind and the value a zero Go struct encodes to
_SPECIAL: dict[str, tuple[str, Any]] = {
    _META + "Time": ("time", None),
    _META + "MicroTime": ("microtime", None),
    _META + "Duration": ("string", "0s"),
    _META + "FieldsV1": ("any", NO_FILL),
    "io.k8s.apimachinery.pkg.api.resource.Quantity": ("quantity", "0"),
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": ("intorstr", 0),
    "io.k8s.apimachinery.pkg.runtime.RawExtension": ("any", None),
}
_ANY_DEFS = re.compile(r"^io\.k8s\.apiextensions-apiserver\.pkg\.apis\.apiextensions\.v1\.JSON(SchemaPropsOr\w+)?$")
_GO_BUILTINS = frozenset({"string", "bool", "int", "int32", "int64", "uint8", "byte", "float32", "float64"})
_PKG_OF_ALIAS = {"metav1": "v1", "corev1": "v1", "apiv1": "v1"}


def _package(definition: str) -> str:
    """The Go package name of a definition (`io.k8s.api.apps.v1.Deployment` -> `v1`)."""
    return definition.rsplit(".", 2)[-2]


def go_type_name(go: str, package: str) -> str:
    """A Go type expression from the source (`*[]Container`, `metav1.Time`) as reflection prints
    it in decoding errors (`[]v1.Container`, `v1.Time`)."""
    go = go.lstrip("*")
    if go.startswith("[]"):
        inner = go[2:]
        return "[]uint8" if inner == "byte" else "[]" + go_type_name(inner, package)
    m = re.match(r"map\[([^\]]+)\](.*)", go)
    if m:
        return f"map[{go_type_name(m.group(1), package)}]{go_type_name(m.group(2), package)}"
    if go in _GO_BUILTINS:
        return "uint8" if go == "byte" else go
    if "." in go:
        pkg, _, name = go.partition(".")
        return f"{_PKG_OF_ALIAS.get(pkg, pkg)}.{name}"
    return f"{package}.{go}"


def _elem_go(go: str) -> str:
    """The element type of a slice or map type expression ('' when it is neither)."""
    go = go.lstrip("*")
    if go.startswith("[]"):
        return go[2:]
    m = re.match(r"map\[[^\]]+\](.*)", go)
    return m.group(1) if m else ""


_STRUCTS: dict[str, Struct] = {}


def struct_for(definition: str) -> Struct:
    """The generated `Struct` of a definition (`io.k8s.api.core.v1.Pod`), made once per process.

    Definitions refer to themselves (a CRD's `JSONSchemaProps`), so the struct is registered before
    its fields are made, and the fields and fills are filled into the registered object."""
    done = _STRUCTS.get(definition)
    if done is not None:
        return done
    spec = builtin_spec()
    d = spec.definitions[definition]
    facts = spec.go_fields.get(definition, {})
    package = _package(definition)
    go_name = definition.rsplit(".", 1)[-1]
    fields: dict[str, Node] = {}
    fills: list[tuple[str, Any]] = []
    shell = _STRUCTS[definition] = Struct("struct", go_name, fields, False, fills=fills, go=f"{package}.{go_name}")
    required = set(d.get("required") or ())
    for name, prop in (d.get("properties") or {}).items():
        go, omitempty = facts.get(name, ["", name not in required])
        node = _node(prop, str(go), bool(omitempty), package)
        fields[name] = node
        if node.fill is not NO_FILL:
            fills.append((name, node.fill))
    return shell


#: the value Go's zero of a scalar encodes to, by OpenAPI type
_ZERO: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False}
_INTSTR_DEF = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"


def _internal_values(definition: str) -> dict[str, Any]:
    """The pointer fields of a versioned struct whose internal counterpart holds a value, with the
    zero it encodes to (`RollingUpdateDaemonSet.maxSurge`: `*intstr.IntOrString` in apps/v1,
    `intstr.IntOrString` in the internal `apps`). The server decodes into the internal type after
    defaulting and encodes back from it, so such a field is written whenever its struct is."""
    spec = builtin_spec()
    if not definition.startswith("io.k8s.api."):
        return {}
    group_version, _, name = definition[len("io.k8s.api."):].rpartition(".")
    group = group_version.split(".", 1)[0]
    versioned = spec.go_structs.get(f"k8s.io/api/{group_version.replace('.', '/')}.{name}")
    internal = spec.go_structs.get(f"k8s.io/kubernetes/pkg/apis/{group}.{name}")
    if not versioned or not internal:
        return {}
    kept = {go_name for go_name, go, *_ in internal if not go.startswith(("*", "[]", "map["))}
    props = spec.definitions[definition].get("properties") or {}
    out: dict[str, Any] = {}
    for go_name, go, json_name, *_ in versioned:
        prop = props.get(json_name) or {}
        zero = 0 if prop.get("$ref") == V2_PREFIX + _INTSTR_DEF else _ZERO.get(prop.get("type", ""))
        if go.startswith("*") and go_name in kept and zero is not None:
            out[json_name] = zero
    return out


#: a path into an object (`"*"` stands for every item of a list or map) and the fields its struct
#: gets from the internal type's zero values
InternalFill = tuple[tuple[str, ...], dict[str, Any]]


@cache
def internal_fills(group: str, version: str, kind: str) -> tuple[InternalFill, ...]:
    """Every struct of a kind that `_internal_values` fills, by path."""
    spec = builtin_spec()
    root = spec.definition_for(group, version, kind)
    out: list[InternalFill] = []

    def walk(definition: str, path: tuple[str, ...], seen: frozenset[str]) -> None:
        values = _internal_values(definition)
        if values:
            out.append((path, values))
        for name, prop in (spec.definitions[definition].get("properties") or {}).items():
            step = [name]
            while True:
                sub = prop.get("items") if prop.get("type") == "array" else (
                    prop.get("additionalProperties") if prop.get("type") == "object" else None)
                if not isinstance(sub, dict):
                    break
                step.append("*")
                prop = sub
            ref = prop.get("$ref")
            if isinstance(ref, str) and ref.startswith(V2_PREFIX):
                target = ref[len(V2_PREFIX):]
                if target in spec.definitions and target not in seen and target.startswith("io.k8s.api."):
                    walk(target, (*path, *step), seen | {target})

    if root:
        walk(root, (), frozenset({root}))
    return tuple(out)


def fill_internal(group: str, version: str, kind: str, obj: Any) -> None:
    """Write the internal type's zero values into a decoded, defaulted object (`internal_fills`)."""
    for path, values in internal_fills(group, version, kind):
        for target in _reach(obj, path):
            for name, zero in values.items():
                if target.get(name) is None:
                    target[name] = zero


def _reach(value: Any, path: tuple[str, ...]) -> list[dict[str, Any]]:
    if not path:
        return [value] if isinstance(value, dict) else []
    head, rest = path[0], path[1:]
    if head == "*":
        items = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else []
        return [x for item in items for x in _reach(item, rest)]
    return _reach(value.get(head), rest) if isinstance(value, dict) else []


@cache
def zero_struct(definition: str) -> dict[str, Any]:
    """What Go encodes for a zero value of the struct (its always-written fields). Go has no
    recursive non-pointer structs, so a struct asked for here is always complete."""
    return {name: fill for name, fill in struct_for(definition).fills}


def _node(prop: dict[str, Any], go: str, omitempty: bool, package: str) -> Node:
    pointer = go.startswith("*")
    shown = go_type_name(go, package) if go else ""
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith(V2_PREFIX):
        target = ref[len(V2_PREFIX):]
        if target in _SPECIAL:
            kind, encoded = _SPECIAL[target]
            return Node(kind, go=shown, fill=NO_FILL if pointer else encoded)
        if _ANY_DEFS.match(target) or target not in builtin_spec().definitions:
            return Node("any", go=shown)
        inner = struct_for(target)
        # omitempty never leaves a struct out: a zero struct is written whole. The field's node
        # shares the struct's (possibly still filling) fields and fills.
        return Struct("struct", inner.go_name, inner.fields, False, fills=inner.fills, go=shown or inner.go,
                      fill=NO_FILL if pointer else zero_struct(target))
    t = prop.get("type")
    if t == "array" or (t == "object" and isinstance(prop.get("additionalProperties"), dict)):
        sub = prop.get("items") if t == "array" else prop.get("additionalProperties")
        elem_go = _elem_go(go)
        elem = _node(sub if isinstance(sub, dict) else {}, elem_go, False, package)
        fill = NO_FILL if (pointer or omitempty) else None
        if prop.get("format") == "byte":
            return Node("bytes", omitempty=omitempty and not pointer, go=shown, fill=fill)
        return Collection("list" if t == "array" else "map", elem, omitempty=omitempty and not pointer, go=shown,
                          fill=fill)
    fmt = prop.get("format", "")
    if t == "string":
        kind = "bytes" if fmt == "byte" else "intorstr" if fmt == "int-or-string" else "string"
        zero: Any = "" if kind != "bytes" else None
    elif t == "integer":
        kind, zero = ("int32" if fmt == "int32" else "int64"), 0
    elif t == "number":
        kind, zero = "float64", 0
    elif t == "boolean":
        kind, zero = "bool", False
    else:
        return Node("any", go=shown)
    if pointer or omitempty:
        return Node(kind, omitempty=omitempty and not pointer, go=shown)
    return Node(kind, go=shown, fill=zero)


def storage_round_trip(node: Node, value: Any) -> None:
    """What storing a built-in object does to it: etcd holds it as protobuf, where an empty list or
    map is no different from none, so a field Go writes even when empty (`rules` of a Role, no
    `omitempty`) reads back as null."""
    if isinstance(node, Struct) and isinstance(value, dict):
        for name, sub in node.fields.items():
            v = value.get(name)
            if v is None:
                continue
            if isinstance(sub, Collection):
                if v == [] or v == {}:
                    value[name] = None
                    continue
                items = v if isinstance(v, list) else list(v.values()) if isinstance(v, dict) else []
                if isinstance(sub.elem, Struct | Collection):
                    for item in items:
                        storage_round_trip(sub.elem, item)
            elif isinstance(sub, Struct):
                storage_round_trip(sub, v)


def kind_struct(group: str, version: str, kind: str) -> Struct | None:
    """The generated `Struct` of a built-in kind, None when the recorded document does not have it."""
    name = builtin_spec().definition_for(group, version, kind)
    return struct_for(name) if name else None


def zero_of_kind(group: str, version: str, kind: str) -> dict[str, Any] | None:
    """What Go encodes for a zero value of a built-in kind, None when the document lacks it."""
    name = builtin_spec().definition_for(group, version, kind)
    return zero_struct(name) if name else None
