"""How the lists of each kind merge: strategic-merge-patch keys and server-side-apply list types.

kube-apiserver learns this from the OpenAPI schemas: `x-kubernetes-list-type` /
`x-kubernetes-list-map-keys` and the strategic-merge-patch tags (`x-kubernetes-patch-strategy`,
`x-kubernetes-patch-merge-key`) of the built-in kinds' definitions (the recorded document, read by
`smd.py`) and of a CRD version's schema. Both the strategic merge patch and server-side apply need the same answer
("is `containers` merged by `name`?"), so it lives here once, as a lookup keyed by the *field path*
of the list: the field names from the object root, list items skipped
(`("spec", "template", "spec", "containers", "ports")`).

A lookup is any callable `ListTypes = Callable[[tuple[str, ...]], ListType | None]`; `None` means
"no information", which both SMP (replace) and SSA (atomic) treat as an atomic list. Asked about
an *object* path, `ListType("atomic")` marks an atomic struct or map (a label selector,
`x-kubernetes-map-type: atomic`), which server-side apply owns and replaces as one value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

FieldPath = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ListType:
    """How one list field merges.

    `type` is the server-side-apply list type: `atomic` (replaced whole), `set` (scalars, merged
    by value) or `map` (objects, merged by `keys`). `merge_key`/`strategy` are the strategic merge
    patch tags: with `strategy == "merge"` a list of objects merges by `merge_key` and a list of
    scalars merges as a set; otherwise the patch replaces the list.
    """

    type: str = "atomic"
    keys: tuple[str, ...] = ()
    merge_key: str | None = None
    strategy: str = "replace"
    retain_keys: bool = False
    #: values the server defaults key fields to (a port's `protocol`), so that `{containerPort: 80}`
    #: in an apply configuration names the same item as the stored `{containerPort: 80, protocol: TCP}`
    key_defaults: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)
    #: the items are atomic structs (`ownerReferences`: `+structType=atomic`): owned as one value
    elem_atomic: bool = field(default=False, compare=False)


ListTypes = Callable[[FieldPath], "ListType | None"]

ATOMIC = ListType()
SET = ListType("set", (), None, "merge")
#: asked about an object path: a map that is an *element* of a map rather than a declared field
#: (a key under `x-kubernetes-preserve-unknown-fields`, a `map[string]struct`), which an apply
#: configuration owns as a member as well as its fields
ELEMENT = ListType("element")

#: the lists of every object's metadata (what a lookup without a kind knows)
_METADATA_ONLY: dict[FieldPath, ListType] = {
    ("metadata", "finalizers"): SET,
    ("metadata", "ownerReferences"): ListType("map", ("uid",), "uid", "merge"),
}


@cache
def builtin_list_types(group: str, kind: str, version: str = "") -> ListTypes:
    """The lookup of a built-in kind, from its recorded OpenAPI definition (`smd.list_types`);
    kinds the document lacks get the metadata lists only."""
    from .openapi import builtin_spec
    from .smd import builtin_type, list_types

    spec = builtin_spec()
    versions = [version] if version else ["v1", "v2", *sorted({v for (g, v, k) in spec.by_gvk
                                                               if g == group and k == kind})]
    for v in versions:
        t = builtin_type(group, v, kind)
        if t is not None:
            return list_types(t)
    return _METADATA_ONLY.get


def list_types_for(target: Any) -> ListTypes:
    """Resolve a lookup from what a caller has at hand.

    Accepts a `ListTypes` callable, a mapping of field paths, `None` (metadata lists only), or a
    `ServedResource`-like object: its strategy's `list_types` (attribute or method, as a CRD strategy
    derived from the schema may provide) wins, then the built-in kind's recorded schema.
    """
    if target is None:
        return _METADATA_ONLY.get
    if isinstance(target, Mapping):
        return target.get
    strategy = getattr(target, "strategy", None)
    lt = getattr(strategy, "list_types", None) if strategy is not None else None
    if callable(lt):
        lt = lt(target)  # a strategy method: list_types(info) -> mapping | lookup | None
    if isinstance(lt, Mapping):
        return lt.get
    if callable(lt):
        return lt
    if hasattr(target, "group") and hasattr(target, "kind"):
        return builtin_list_types(target.group, target.kind, getattr(target, "version", ""))
    if callable(target):
        return target
    return _METADATA_ONLY.get


# ---- custom resources -------------------------------------------------------------------------
def schema_list_types(schema: Mapping[str, Any] | None) -> ListTypes:
    """The lookup of a custom resource version, from its `openAPIV3Schema` (`smd.custom_type`):
    `x-kubernetes-list-type: map|set` lists merge (keyed by `x-kubernetes-list-map-keys`, key
    defaults from the schema), other lists are atomic, and so are objects marked
    `x-kubernetes-map-type: atomic`. Custom resources do not support strategic merge patch, so
    only the server-side-apply side matters."""
    from .smd import custom_type, list_types

    return list_types(custom_type(schema)) if isinstance(schema, Mapping) else _METADATA_ONLY.get


def combine(*lookups: ListTypes | Iterable[tuple[FieldPath, ListType]]) -> ListTypes:
    """A lookup answering from the first of `lookups` that knows the path."""
    fns: list[ListTypes] = []
    for lk in lookups:
        if callable(lk):
            fns.append(lk)
        else:
            fns.append(dict(lk).get)

    def lookup(path: FieldPath) -> ListType | None:
        for fn in fns:
            lt = fn(path)
            if lt is not None:
                return lt
        return None

    return lookup
