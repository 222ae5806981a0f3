"""Object accessors: read ``metadata`` fields of a JSON-shaped object (a dict or a read-only view).

One set for every layer, so "missing", "empty" and "not the right type" mean the same thing
everywhere: string fields come back as a non-empty ``str`` or ``None``, maps and lists as an
empty read-only value when absent. Objects from the server are trusted to be well formed,
but user objects and test doubles are not, hence the type checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "annotations_of",
    "labels_of",
    "metadata_of",
    "name_of",
    "namespace_of",
    "owner_references_of",
    "resource_version_of",
    "uid_of",
    "without_nulls",
]

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


def metadata_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``obj.metadata``, or an empty mapping when ``obj`` is None or has no metadata."""
    if obj is None:
        return _EMPTY
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else _EMPTY


def _text(obj: Mapping[str, Any] | None, key: str) -> str | None:
    value = metadata_of(obj).get(key)
    return value if isinstance(value, str) and value else None


def name_of(obj: Mapping[str, Any] | None) -> str | None:
    """``metadata.name``, or None when missing or empty (e.g. an object with only generateName)."""
    return _text(obj, "name")


def namespace_of(obj: Mapping[str, Any] | None) -> str | None:
    """``metadata.namespace``, or None (cluster-scoped objects, or not set yet)."""
    return _text(obj, "namespace")


def uid_of(obj: Mapping[str, Any] | None) -> str | None:
    """``metadata.uid``, or None (objects not created yet)."""
    return _text(obj, "uid")


def resource_version_of(obj: Any) -> str | None:
    """``metadata.resourceVersion`` (non-empty), or None; fast for the plain dicts orjson decodes.

    Typed ``Any`` because the watch path calls it on whatever a watch event carried.
    """
    if type(obj) is dict:  # the hot path: orjson gives plain dicts
        md = obj.get("metadata")
        if type(md) is dict:
            rv = md.get("resourceVersion")
            return rv if type(rv) is str and rv else None
    if isinstance(obj, Mapping):
        md = obj.get("metadata")
        if isinstance(md, Mapping):
            rv = md.get("resourceVersion")
            if isinstance(rv, str) and rv:
                return rv
    return None


def labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    """``metadata.labels``, or an empty mapping."""
    labels = metadata_of(obj).get("labels")
    return labels if isinstance(labels, Mapping) else _EMPTY


def annotations_of(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    """``metadata.annotations``, or an empty mapping."""
    annotations = metadata_of(obj).get("annotations")
    return annotations if isinstance(annotations, Mapping) else _EMPTY


def owner_references_of(obj: Mapping[str, Any] | None) -> Sequence[Mapping[str, Any]]:
    """``metadata.ownerReferences``, or an empty tuple."""
    refs = metadata_of(obj).get("ownerReferences")
    return refs if isinstance(refs, Sequence) and not isinstance(refs, str) else ()


def without_nulls(value: Any) -> Any:
    """A deep copy of a JSON value without null map entries: what the API server keeps of a
    default or an applied configuration, where an explicit null means "no value"."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value
