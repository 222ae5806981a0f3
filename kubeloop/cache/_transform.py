"""Transforms and filters: what an informer does to each object before it stores it.

A *transform* gets the freshly decoded object (a plain dict the informer owns, so it may change
it in place) and returns the object to store. It runs once per object per event, on the watch
path, so it should be cheap and idempotent. The default drops ``metadata.managedFields``, which is
often a third to a half of an object's JSON and is never needed by a controller's reads.

A *filter* decides whether a (transformed) object is stored at all: an object that stops passing
is removed from the store and reported deleted, exactly as if it had been deleted.

Transforms are compared by identity: two informers on the same scope share objects only when they
use the very same transform function (``DEFAULT_TRANSFORM`` is one fixed function), so a transformed object
is never silently handed to a reader who asked for another transform.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "DEFAULT_TRANSFORM",
    "Filter",
    "Transform",
    "compose",
    "drop_annotations",
    "drop_fields",
    "strip_managed_fields",
]

Transform = Callable[[dict[str, Any]], dict[str, Any]]
"""obj (plain dict, owned by the caller; may be changed in place) -> the object to store."""

Filter = Callable[[Mapping[str, Any]], bool]
"""obj (transformed) -> store it?"""


def strip_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop ``metadata.managedFields`` (server-side apply bookkeeping nobody reads from a cache)."""
    md = obj.get("metadata")
    if type(md) is dict:
        md.pop("managedFields", None)
    return obj


DEFAULT_TRANSFORM: Transform = strip_managed_fields
"""The default transform of every informer (pass ``transform=None`` to store objects as served)."""


def drop_fields(*paths: str) -> Transform:
    """A transform dropping dotted paths (``"status"``, ``"metadata.annotations"``, ...)."""
    split = [p.split(".") for p in paths]

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        for parts in split:
            cur: Any = obj
            for part in parts[:-1]:
                cur = cur.get(part) if type(cur) is dict else None
                if cur is None:
                    break
            if type(cur) is dict:
                cur.pop(parts[-1], None)
        return obj

    transform.__qualname__ = f"drop_fields({', '.join(paths)})"
    return transform


def drop_annotations(*keys: str) -> Transform:
    """A transform dropping these annotations (e.g. ``kubectl.kubernetes.io/last-applied-configuration``)."""

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        md = obj.get("metadata")
        if type(md) is not dict:
            return obj
        ann = md.get("annotations")
        if type(ann) is dict:
            for k in keys:
                ann.pop(k, None)
            if not ann:
                del md["annotations"]
        return obj

    transform.__qualname__ = f"drop_annotations({', '.join(keys)})"
    return transform


def compose(*transforms: Transform | None) -> Transform | None:
    """Apply several transforms in order (None entries are skipped; None if nothing is left)."""
    fns = [t for t in transforms if t is not None]
    if not fns:
        return None
    if len(fns) == 1:
        return fns[0]

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        for fn in fns:
            obj = fn(obj)
        return obj

    transform.__qualname__ = " | ".join(getattr(f, "__qualname__", repr(f)) for f in fns)
    return transform
