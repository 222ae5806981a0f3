"""Server-side apply's schema: structured-merge-diff's view of a kind, built from OpenAPI.

kube-apiserver turns the OpenAPI definitions (built-in kinds) or a CRD version's schema into
structured-merge-diff types (kube-openapi's `schemaconv`), and checks every apply configuration
against them before merging ("failed to create typed patch object"): a field the type does not
declare, a scalar of the wrong kind, a duplicate or key-less item of an associative list. The same
types say how lists merge (`x-kubernetes-list-type`, or the strategic-merge-patch tags), which
both apply and strategic merge patch follow: `list_types` gives them as `listtypes.ListType`s.

Scalars: integers and numbers are `numeric`, strings `string`, booleans `boolean`; Quantity,
IntOrString, timestamps, other string formats and RawExtension are `untyped` (anything goes). A
struct without `x-kubernetes-preserve-unknown-fields` declares its fields and nothing else; a map
(`additionalProperties`) takes any key; an object without either, or a schema without a type,
is "deduced" (anything). Key fields of associative lists take the definition's default when an
item leaves them out (`protocol: TCP`, `""` for a required string).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from .govalues import sprint_sharp_v, sprint_v, type_name
from .listtypes import ATOMIC, ELEMENT, FieldPath, ListType, ListTypes
from .openapi import V2_PREFIX, builtin_spec

_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_RAW = "io.k8s.apimachinery.pkg.runtime.RawExtension"


class SmdType:
    """One structured-merge-diff type: `kind` is `map` (a struct or a map), `list`, `scalar` or
    `deduced`. Children are resolved on first use (definitions are recursive)."""

    __slots__ = ("_elem", "_fields", "atomic", "default", "defs", "kind", "list_type", "name", "open", "scalar",
                 "schema")

    def __init__(self, schema: Mapping[str, Any], defs: Definitions, name: str = "") -> None:
        self.schema = schema
        self.defs = defs
        self.name = name
        self._fields: dict[str, SmdType] | None = None
        self._elem: SmdType | None = None
        self.atomic = False
        self.open = False  # a struct that keeps unknown fields (x-kubernetes-preserve-unknown-fields)
        self.scalar = ""
        self.list_type: ListType | None = None
        t = schema.get("type")
        props = schema.get("properties")
        if name == _QUANTITY:
            self.kind, self.scalar = "scalar", "untyped"
        elif t == "array":
            self.kind = "list"
            self.list_type = _list_type(schema, self)
        elif isinstance(props, Mapping) and (t in (None, "object")):
            self.kind = "map"
            self.open = bool(schema.get("x-kubernetes-preserve-unknown-fields")) or defs.preserve_unknown
            self.atomic = schema.get("x-kubernetes-map-type") == "atomic"
        elif t == "object":
            self.kind = "map"  # a map: its element type, or anything
            self.atomic = schema.get("x-kubernetes-map-type") == "atomic"
        elif t in ("integer", "number"):
            self.kind, self.scalar = "scalar", "numeric"
        elif t == "string":
            self.kind = "scalar"
            self.scalar = "string" if schema.get("format", "") in ("", "byte") else "untyped"
        elif t == "boolean":
            self.kind, self.scalar = "scalar", "boolean"
        else:
            self.kind = "deduced"

    @property
    def fields(self) -> dict[str, SmdType]:
        if self._fields is None:
            props = self.schema.get("properties")
            self._fields = {k: self.defs.ref(v) for k, v in props.items()} if isinstance(props, Mapping) else {}
        return self._fields

    @property
    def elem(self) -> SmdType | None:
        """A list's item type, a map's value type (None for a struct that declares its fields only)."""
        if self._elem is None:
            if self.kind == "list":
                items = self.schema.get("items")
                self._elem = self.defs.ref(items if isinstance(items, Mapping) else {})
            elif self.kind == "map":
                addl = self.schema.get("additionalProperties")
                if isinstance(addl, Mapping):
                    self._elem = self.defs.ref(addl)
                elif isinstance(self.schema.get("properties"), Mapping):
                    self._elem = DEDUCED if self.open else None
                else:
                    self._elem = DEDUCED
        return self._elem

    def field_default(self, name: str) -> Any:
        """The default of a struct field (None: none), from the schema or the generated definitions."""
        props = self.schema.get("properties")
        prop = props.get(name) if isinstance(props, Mapping) else None
        if isinstance(prop, Mapping) and "default" in prop:
            return prop["default"]
        return self.defs.defaults.get(self.name, {}).get(name)


class Definitions:
    """Named definitions (`$ref` targets) and the defaults beside them."""

    def __init__(self, definitions: Mapping[str, Mapping[str, Any]], defaults: Mapping[str, Mapping[str, Any]],
                 preserve_unknown: bool = False) -> None:
        self.definitions = definitions
        self.defaults = defaults
        self.preserve_unknown = preserve_unknown
        self._named: dict[str, SmdType] = {}

    def named(self, name: str) -> SmdType:
        t = self._named.get(name)
        if t is None:
            schema = self.definitions.get(name)
            t = self._named[name] = SmdType(schema, self, name) if schema is not None else DEDUCED
        return t

    def ref(self, schema: Mapping[str, Any]) -> SmdType:
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(V2_PREFIX):
            name = ref[len(V2_PREFIX):]
            if name == _RAW:
                return DEDUCED
            return self.named(name)
        return SmdType(schema, self)


def _list_type(schema: Mapping[str, Any], owner: SmdType) -> ListType:
    """`schemaconv.VisitArray`: the list type, then the strategic-merge-patch tags beside it."""
    strategy = str(schema.get("x-kubernetes-patch-strategy") or "")
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    smp_merge = "merge" in strategy.split(",")
    kind = schema.get("x-kubernetes-list-type")
    keys: tuple[str, ...] = ()
    if kind == "map":
        keys = tuple(str(k) for k in schema.get("x-kubernetes-list-map-keys") or ())
        rel = "map"
    elif kind == "set":
        rel = "set"
    elif kind is None and smp_merge:
        rel = "map" if merge_key else "set"
        keys = (str(merge_key),) if merge_key else ()
    else:
        rel = "atomic"
    items = schema.get("items")
    elem_atomic = False
    if isinstance(items, Mapping):
        ref = items.get("$ref")
        target = owner.defs.definitions.get(ref[len(V2_PREFIX):]) if isinstance(ref, str) and \
            ref.startswith(V2_PREFIX) else items
        elem_atomic = isinstance(target, Mapping) and target.get("x-kubernetes-map-type") == "atomic"
    return ListType(rel, keys, str(merge_key) if merge_key else None, "merge" if smp_merge else "replace",
                    "retainKeys" in strategy.split(","), _KeyDefaults(owner, keys) if keys else None, elem_atomic)


class _KeyDefaults(Mapping[str, Any]):
    """The defaults of a keyed list's key fields, looked up in its item type when first asked."""

    def __init__(self, owner: SmdType, keys: tuple[str, ...]) -> None:
        self.owner, self.key_fields = owner, keys
        self._d: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._d is None:
            elem = self.owner.elem
            self._d = {}
            if elem is not None and elem.kind == "map":
                for k in self.key_fields:
                    v = elem.field_default(k)
                    if v is not None:
                        self._d[k] = v
        return self._d

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __iter__(self) -> Any:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


DEDUCED = SmdType({}, Definitions({}, {}))


# ---- types per kind -----------------------------------------------------------------------------------
@cache
def _builtin_definitions() -> Definitions:
    spec = builtin_spec()
    return Definitions(spec.definitions, spec.defaults)


def builtin_type(group: str, version: str, kind: str) -> SmdType | None:
    """The type of a built-in kind, None when the recorded document does not have it."""
    name = builtin_spec().definition_for(group, version, kind)
    return _builtin_definitions().named(name) if name else None


def custom_type(schema: Mapping[str, Any] | None, preserve_unknown: bool = False) -> SmdType:
    """The type of a custom resource version: its schema, with ObjectMeta and TypeMeta as the CRD
    OpenAPI builder adds them (no schema: anything)."""
    spec = builtin_spec()
    if not isinstance(schema, Mapping):
        return DEDUCED
    root = dict(schema)
    props = dict(root.get("properties") or {})
    props["metadata"] = {"$ref": V2_PREFIX + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    root["properties"] = props
    root.setdefault("type", "object")
    return Definitions(spec.definitions, spec.defaults, preserve_unknown).ref(_embedded(root))


def _embedded(s: Mapping[str, Any]) -> dict[str, Any]:
    """TypeMeta and ObjectMeta on every `x-kubernetes-embedded-resource` object of a CRD schema."""
    out = dict(s)
    if isinstance(s.get("properties"), Mapping):
        out["properties"] = {k: _embedded(v) for k, v in s["properties"].items() if isinstance(v, Mapping)}
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), Mapping):
            out[key] = _embedded(s[key])
    if s.get("x-kubernetes-embedded-resource"):
        props = dict(out.get("properties") or {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props["metadata"] = {"$ref": V2_PREFIX + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
        out["properties"] = props
    return out


# ---- validation (typed.AsTyped / validatingObjectWalker) -------------------------------------------------
def _boxed(value: Any) -> str:
    """How SMD's errors print a value (`%v` of a `*valueUnstructured`): `&{x}`."""
    return "&{" + sprint_v(value) + "}"


def validate(t: SmdType, value: Any) -> list[str]:
    """structured-merge-diff's validation errors for `value` as type `t` (`.path: message` each)."""
    return [f"{p}: {m}" if p else m for p, m in _validate(t, value)]


def format_errors(errors: list[str]) -> str:
    """`ValidationErrors.Error()`: one error as it is, several as an indented list."""
    if len(errors) == 1:
        return errors[0]
    return "\n".join(["errors:", *("  " + e for e in errors)])


def _validate(t: SmdType, value: Any) -> list[tuple[str, str]]:
    if value is None or t.kind == "deduced":
        return []
    if t.kind == "scalar":
        return _scalar(t.scalar, value)
    if t.kind == "list":
        if not isinstance(value, list):
            return [("", f"expected list, got {_boxed(value)}")]
        return _list(t, value)
    if not isinstance(value, dict):
        return [("", f"expected map, got {_boxed(value)}")]
    errors: list[tuple[str, str]] = []
    fields = t.fields
    for key in sorted(value):  # the real server walks Go's map order; sorted keeps it deterministic
        sub = fields.get(key)
        if sub is None:
            sub = t.elem
            if sub is None:
                errors.append((f".{key}", "field not declared in schema"))
                break
        errors.extend((f".{key}{p}", m) for p, m in _validate(sub, value[key]))
    return errors


def _scalar(kind: str, value: Any) -> list[tuple[str, str]]:
    if kind == "numeric" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return [("", f"expected numeric (int or float), got {type_name(value)}")]
    if kind == "string" and not isinstance(value, str):
        return [("", f"expected string, got &value.valueUnstructured{{Value:{sprint_sharp_v(value)}}}")]
    if kind == "boolean" and not isinstance(value, bool):
        return [("", f"expected boolean, got {_boxed(value)}")]
    return []


def item_key(lt: ListType, item: Any) -> str:
    """The path element of an associative list's item (`[name="a"]`, `[=1]`); raises ValueError
    with SMD's message when the item cannot have one."""
    if lt.keys:
        if item is None:
            raise ValueError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise ValueError("associative list with keys may not have non-map elements")
        parts: list[tuple[str, Any]] = []
        for k in lt.keys:
            if k in item:
                parts.append((k, item[k]))
            elif lt.key_defaults is not None and k in lt.key_defaults:
                parts.append((k, lt.key_defaults[k]))
            else:
                raise ValueError(f"associative list with keys has an element that omits key field \"{k}\" "
                                 "(and doesn't have default value)")
        from .fieldpath import to_json

        return "[" + ",".join(f"{k}={to_json(v)}" for k, v in sorted(parts)) + "]"
    if isinstance(item, dict):
        raise ValueError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise ValueError("not supported: associative list with lists as elements")
    if item is None:
        raise ValueError("associative list without keys has an element that's an explicit null")
    from .fieldpath import to_json

    return "[=" + to_json(item) + "]"


def _list(t: SmdType, value: list[Any]) -> list[tuple[str, str]]:
    lt = t.list_type
    assert lt is not None
    elem = t.elem
    errors: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        if lt.type == "atomic":
            pe = f"[{i}]"
        else:
            try:
                pe = item_key(lt, item)
            except ValueError as e:
                errors.append(("", f"element {i}: {e}"))
                return errors  # no path element: nothing deeper can be reported (and SMD stops here)
            if pe in seen:
                errors.append(("", f"duplicate entries for key {pe}"))
            seen.add(pe)
        if elem is not None:
            errors.extend((pe + p, m) for p, m in _validate(elem, item))
    return errors


# ---- list types for merging ---------------------------------------------------------------------------
def list_types(root: SmdType) -> ListTypes:
    """A `listtypes.ListTypes` lookup over a kind's type: the `ListType` of the list at a field path
    (list items skipped), `ATOMIC` for an atomic map or struct, None for anything else."""
    memo: dict[FieldPath, ListType | None] = {}

    def lookup(path: FieldPath) -> ListType | None:
        if path in memo:
            return memo[path]
        t: SmdType | None = root
        declared = True
        for name in path:
            while t is not None and t.kind == "list":
                t = t.elem
            if t is not None and t.kind == "deduced":
                declared = False  # anything below a deduced value is deduced too
                continue
            if t is None or t.kind != "map":
                t = None
                break
            field = t.fields.get(name)
            declared = field is not None
            t = field or t.elem
        out: ListType | None = None
        if t is not None:
            if t.kind == "list":
                out = t.list_type
            elif t.kind == "map" and t.atomic:
                out = ATOMIC
            elif t.kind in ("map", "deduced") and not declared and path:
                out = ELEMENT
        memo[path] = out
        return out

    return lookup
