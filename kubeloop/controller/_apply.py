"""Server-side apply that skips the call when it would change nothing.

A controller re-applies its desired objects on every reconcile; most of those applies change
nothing. Each one still costs a request, and on some servers a no-op apply bumps the
resourceVersion and wakes every watcher (the classic self-triggering loop). This helper decides,
without a request, when an apply is certainly a no-op:

- this field manager applied exactly the same configuration to this object before (the tracker
  remembers a fingerprint of the last applied configuration per object, because the cache drops
  ``managedFields``: without that memory a field removed from the desired configuration would
  look "already there" in the live object and never be released), **and**
- the live object is unchanged since that apply (same resourceVersion; works with metadata-only
  caches), or the cached live object contains every desired field with the desired value.

Anything else goes to the server. After a restart the memory is empty, so the first apply of each
object is sent once; from then on a steady state makes no calls. Pure code: `Context.apply` does
the I/O.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from kubeloop.cache import json_default
from kubeloop.meta import semantically_equal

_IGNORED_TOP = frozenset({"apiVersion", "kind"})
_LIST_KEYS = ("name", "containerPort", "port", "mountPath", "devicePath", "ip", "type")


def fingerprint(config: Mapping[str, Any]) -> bytes:
    """A short stable digest of an apply configuration (key order does not matter)."""
    raw = orjson.dumps(config, default=json_default, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(raw, digest_size=16).digest()


def contains(live: Any, desired: Any) -> bool:
    """True if ``live`` already has every field of ``desired`` with the same value.

    Maps: every desired key must be present and contained (a desired ``None`` means absent).
    Lists: same length and element-wise containment, or, for lists of maps carrying a key field
    (``name``, ``containerPort``, ...), each desired item contained in the live item with the
    same key (another manager may own extra items). Scalars: equal as the API server sees them
    (`semantically_equal`: ``1`` and ``1.0`` differ, so do ``True`` and ``1``).
    """
    if isinstance(desired, Mapping):
        if not isinstance(live, Mapping):
            return False
        for k, v in desired.items():
            if v is None:
                if live.get(k) is not None:
                    return False
                continue
            if k not in live or not contains(live[k], v):
                return False
        return True
    if isinstance(desired, (list, tuple)) or (isinstance(desired, Sequence) and not isinstance(desired, str)):
        if not isinstance(live, Sequence) or isinstance(live, str):
            return False
        if len(live) == len(desired) and all(contains(a, b) for a, b in zip(live, desired, strict=True)):
            return True
        return _contains_keyed(live, desired)
    return semantically_equal(live, desired)


def _list_key(items: Sequence[Any]) -> str | None:
    for key in _LIST_KEYS:
        if items and all(isinstance(i, Mapping) and key in i for i in items):
            return key
    return None


def _contains_keyed(live: Sequence[Any], desired: Sequence[Any]) -> bool:
    key = _list_key(desired)
    if key is None:
        return False
    by_key = {i.get(key): i for i in live if isinstance(i, Mapping)}
    return all(d[key] in by_key and contains(by_key[d[key]], d) for d in desired)


def desired_contained(live: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """``contains`` over the whole object, ignoring apiVersion/kind (the cache may hold another version)."""
    return contains(live, {k: v for k, v in desired.items() if k not in _IGNORED_TOP})


def is_full_object(obj: Mapping[str, Any]) -> bool:
    """False for metadata-only objects (PartialObjectMetadata): those cannot be compared field by field."""
    return obj.get("kind") != "PartialObjectMetadata" and any(k not in ("apiVersion", "kind", "metadata") for k in obj)


@dataclass(slots=True)
class Applied:
    """What this field manager last applied to one object, and the resourceVersion it produced."""

    fingerprint: bytes
    resource_version: str | None
    uid: str | None


class AppliedMemory:
    """Last applied configuration per (object, field manager, subresource), bounded LRU."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, Applied] = OrderedDict()

    def get(self, key: Hashable) -> Applied | None:
        """The remembered apply of ``key`` (refreshes its LRU position)."""
        got = self._entries.get(key)
        if got is not None:
            self._entries.move_to_end(key)
        return got

    def put(self, key: Hashable, applied: Applied) -> None:
        """Remember an apply the server accepted."""
        self._entries[key] = applied
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, key: Hashable) -> None:
        """Forget ``key`` (after a failed apply: the server state is unknown)."""
        self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)


def can_skip(
    live: Mapping[str, Any] | None,
    desired: Mapping[str, Any],
    remembered: Applied | None,
    desired_fingerprint: bytes,
) -> bool:
    """The no-op decision described in the module docstring (pure)."""
    if live is None or remembered is None or remembered.fingerprint != desired_fingerprint:
        return False
    meta = live.get("metadata") or {}
    if remembered.uid and meta.get("uid") and meta.get("uid") != remembered.uid:
        return False  # deleted and recreated meanwhile
    if remembered.resource_version and meta.get("resourceVersion") == remembered.resource_version:
        return True
    return is_full_object(live) and desired_contained(live, desired)
