"""Secondary indexes over a store, and the ready-made ones (owner, namespace).

An index function maps a (read-only) object to the index keys it should be
found under. The store remembers each object's keys, so an update touches only
the keys that changed (O(k)), and an object that is deleted or stops producing
a key leaves every bucket at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

__all__ = [
    "NAMESPACE_INDEX",
    "OWNER_INDEX",
    "OWNER_REF_INDEX",
    "IndexFunc",
    "owner_ref_index",
    "owner_ref_key",
    "owner_uid_index",
]

IndexFunc = Callable[[Mapping[str, Any]], Iterable[str] | str | None]
"""obj (read-only view) -> the index keys it is found under (a single str is one key)."""

OWNER_INDEX = "owner"
"""Built-in: owner uid -> dependents (from metadata.ownerReferences)."""

OWNER_REF_INDEX = "owner-ref"
"""Built-in: ``owner_ref_key(group, kind, namespace, name)`` of each owner -> dependents."""

NAMESPACE_INDEX = "namespace"
"""Built-in, free: namespace -> objects (the store is laid out by namespace)."""


def owner_ref_key(api_version: str, kind: str, namespace: str, name: str) -> str:
    """The OWNER_REF_INDEX key ``group/Kind/namespace/name`` for an owner's apiVersion.

    The version is dropped (an owner is the same object whichever version names it);
    the core group is "" (``v1`` -> ``/Pod/ns/name``).
    """
    group = api_version.rpartition("/")[0]
    return f"{group}/{kind}/{namespace}/{name}"


def owner_uid_index(obj: Mapping[str, Any]) -> list[str]:
    """Owner uids of ``obj``."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [r["uid"] for r in refs if r.get("uid")]


def owner_ref_index(obj: Mapping[str, Any]) -> list[str]:
    """``group/Kind/namespace/name`` of each owner (owners live in the dependent's namespace)."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace") or ""
    refs = md.get("ownerReferences") or ()
    return [owner_ref_key(r.get("apiVersion", ""), r.get("kind", ""), ns, r.get("name", "")) for r in refs]


E = TypeVar("E")


class Index(Generic[E]):
    """One named index: buckets of entries per key (insertion-ordered, identity-keyed)."""

    __slots__ = ("buckets", "fn", "name")

    def __init__(self, name: str, fn: IndexFunc) -> None:
        self.name = name
        self.fn = fn
        self.buckets: dict[str, dict[E, None]] = {}

    def keys_for(self, view: Mapping[str, Any]) -> tuple[str, ...]:
        """The distinct keys ``fn`` gives for an object (interned: many objects share them)."""
        got = self.fn(view)
        if got is None:
            return ()
        if isinstance(got, str):
            return (sys.intern(got),)
        out: dict[str, None] = {}
        for k in got:
            if not isinstance(k, str):
                raise TypeError(f"index {self.name!r} returned a non-str key {k!r}")
            out[sys.intern(k)] = None
        return tuple(out)

    def add(self, entry: E, keys: tuple[str, ...]) -> None:
        """Put ``entry`` under each key."""
        buckets = self.buckets
        for k in keys:
            b = buckets.get(k)
            if b is None:
                buckets[k] = {entry: None}
            else:
                b[entry] = None

    def remove(self, entry: E, keys: tuple[str, ...]) -> None:
        """Take ``entry`` out of each key's bucket (empty buckets go away)."""
        buckets = self.buckets
        for k in keys:
            b = buckets.get(k)
            if b is not None:
                b.pop(entry, None)
                if not b:
                    del buckets[k]

    def move(self, entry: E, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        """Re-file ``entry`` from ``old`` keys to ``new`` keys, touching only the difference."""
        if old == new:
            return
        gone = [k for k in old if k not in new]
        came = [k for k in new if k not in old]
        self.remove(entry, tuple(gone))
        self.add(entry, tuple(came))
