"""Secondary indexes over a store, and the ready-made ones (owner, namespace).

An index function maps a (read-only) object to the index keys it should be
found under. The store remembers each object's keys, so an update touches only
the keys that changed (O(k)), and an object that is deleted or stops producing
a key leaves every bucket at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

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


Keys = str | tuple[str, ...]
"""An object's keys in one index, packed: one key is held as the str itself (saves a tuple)."""

Bucket = tuple[str, str] | dict[str, str | tuple[str, ...]]
"""One index key's objects: (namespace, name) for one object, else ``{name: namespace}`` (a tuple of
namespaces for a name filed from several)."""


def unpack(keys: Keys) -> tuple[str, ...]:
    """The keys as a tuple."""
    return (keys,) if type(keys) is str else keys  # type: ignore[return-value]


class Index:
    """One named index: key -> the objects, as (namespace, name), filed under it.

    A bucket with one object holds its (namespace, name), not a one-item dict: indexes on (nearly)
    unique values, such as an IP or a uid, then cost a tuple per object. A larger bucket is a dict
    ``{name: namespace}``: a member costs one dict slot and references strings the store holds
    anyway, no tuple of its own (a tuple per member would cost ~56 bytes per indexed object). The rare
    name filed from several namespaces holds a tuple of them.
    """

    __slots__ = ("buckets", "fn", "name", "trusted")

    def __init__(self, name: str, fn: IndexFunc, *, trusted: bool = False) -> None:
        self.name = name
        self.fn = fn
        self.trusted = trusted  # fn gets the plain object (built-in functions that never change it)
        self.buckets: dict[str, Bucket] = {}

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

    def members(self, key: str) -> list[tuple[str, str]]:
        """The (namespace, name) of the objects filed under ``key``."""
        b = self.buckets.get(key)
        if b is None:
            return []
        if isinstance(b, tuple):
            return [b]
        out = [(ns, name) for name, ns in b.items() if type(ns) is str]
        if len(out) < len(b):  # some names are filed from several namespaces
            out += [(n, name) for name, nss in b.items() if type(nss) is tuple for n in nss]
        return out

    def add(self, namespace: str, name: str, keys: Keys) -> None:
        """File the object under each key."""
        buckets = self.buckets
        for k in unpack(keys):
            b = buckets.get(k)
            if b is None:
                buckets[k] = (namespace, name)
            elif isinstance(b, tuple):
                if b[1] != name or b[0] != namespace:
                    d: dict[str, str | tuple[str, ...]] = {b[1]: b[0]}
                    _put(d, namespace, name)
                    buckets[k] = d
            else:
                _put(b, namespace, name)

    def remove(self, namespace: str, name: str, keys: Keys) -> None:
        """Take the object out of each key's bucket (empty buckets go away)."""
        buckets = self.buckets
        for k in unpack(keys):
            b = buckets.get(k)
            if b is None:
                continue
            if isinstance(b, tuple):
                if b[1] == name and b[0] == namespace:
                    del buckets[k]
                continue
            d = b
            have = d.get(name)
            if have is None:
                continue
            if type(have) is str:
                if have != namespace:
                    continue
                del d[name]
            elif namespace in have:
                rest = tuple(n for n in have if n != namespace)
                d[name] = rest[0] if len(rest) == 1 else rest
            if not d:
                del buckets[k]
            elif len(d) == 1:
                ((last, ns),) = d.items()
                if type(ns) is str:
                    buckets[k] = (ns, last)

    def move(self, namespace: str, name: str, old: Keys, new: Keys) -> None:
        """Re-file the object from ``old`` keys to ``new`` keys, touching only the difference."""
        if old == new:
            return
        o, n = unpack(old), unpack(new)
        self.remove(namespace, name, tuple(k for k in o if k not in n))
        self.add(namespace, name, tuple(k for k in n if k not in o))


def _put(d: dict[str, str | tuple[str, ...]], namespace: str, name: str) -> None:
    have = d.get(name)
    if have is None:
        d[name] = namespace
    elif type(have) is str:
        if have != namespace:
            d[name] = (have, namespace)
    elif namespace not in have:
        d[name] = (*have, namespace)
