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

Keys = str | tuple[str, ...]
"""An object's keys in one index, packed: one key is held as the str itself (saves a tuple)."""


def unpack(keys: Keys) -> tuple[str, ...]:
    """The keys as a tuple."""
    return (keys,) if type(keys) is str else keys  # type: ignore[return-value]


class Index(Generic[E]):
    """One named index: key -> the entries filed under it.

    A bucket with one entry holds the entry itself, not a one-item dict: indexes on
    (nearly) unique values, such as an IP or a uid, then cost a dict slot per object.
    Larger buckets are insertion-ordered dicts used as sets. Entries compare by value (the store
    files objects by their (namespace, name) key).
    """

    __slots__ = ("buckets", "fn", "name", "trusted")

    def __init__(self, name: str, fn: IndexFunc, *, trusted: bool = False) -> None:
        self.name = name
        self.fn = fn
        self.trusted = trusted  # fn gets the plain object (built-in functions that never change it)
        self.buckets: dict[str, E | dict[E, None]] = {}

    def keys_for(self, view: Mapping[str, Any]) -> Keys:
        """The distinct keys ``fn`` gives for an object, packed and interned (many objects share them)."""
        got = self.fn(view)
        if got is None:
            return ()
        if isinstance(got, str):
            return sys.intern(got)
        out: dict[str, None] = {}
        for k in got:
            if not isinstance(k, str):
                raise TypeError(f"index {self.name!r} returned a non-str key {k!r}")
            out[sys.intern(k)] = None
        keys = tuple(out)
        return keys[0] if len(keys) == 1 else keys

    def members(self, key: str) -> Iterable[E]:
        """The entries filed under ``key``."""
        b = self.buckets.get(key)
        if b is None:
            return ()
        if type(b) is dict:
            return b
        return (b,)  # type: ignore[return-value]

    def add(self, entry: E, keys: Keys) -> None:
        """Put ``entry`` under each key."""
        buckets = self.buckets
        for k in unpack(keys):
            b = buckets.get(k)
            if b is None:
                buckets[k] = entry
            elif type(b) is dict:
                b[entry] = None
            elif b != entry:
                buckets[k] = {b: None, entry: None}  # type: ignore[dict-item]

    def remove(self, entry: E, keys: Keys) -> None:
        """Take ``entry`` out of each key's bucket (empty buckets go away)."""
        buckets = self.buckets
        for k in unpack(keys):
            b = buckets.get(k)
            if b is None:
                continue
            if type(b) is dict:
                b.pop(entry, None)
                if len(b) == 1:
                    buckets[k] = next(iter(b))
                elif not b:
                    del buckets[k]
            elif b == entry:
                del buckets[k]

    def move(self, entry: E, old: Keys, new: Keys) -> None:
        """Re-file ``entry`` from ``old`` keys to ``new`` keys, touching only the difference."""
        if old == new:
            return
        o, n = unpack(old), unpack(new)
        self.remove(entry, tuple(k for k in o if k not in n))
        self.add(entry, tuple(k for k in n if k not in o))
