"""Read-only views over cached objects.

Every reader of a shared cache gets the same object, so nobody may change it.
A view wraps the underlying dict or list without copying (O(1)); nested dicts
and lists are wrapped lazily when read. Every mutating method raises
:class:`ReadOnlyError`, whose message says how to get a mutable copy:
``kubeloop.cache.thaw(obj)`` or ``obj.thaw()``.

Views are deliberately unhashable, like the dicts and lists they stand for.
To serialize one, pass ``default=json_default`` to ``orjson.dumps`` (or
``json.dumps``), or use :func:`dumps`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NoReturn, overload

import orjson

__all__ = [
    "FrozenDict", "FrozenList", "MetadataOnlyError", "ReadOnlyError", "dumps", "freeze", "json_default", "thaw",
    "to_builtin", "unwrap",
]

_HINT = (
    "cached objects are read-only (shared by every reader of the cache); "
    "get a mutable deep copy with kubeloop.cache.thaw(obj) or obj.thaw()"
)


class ReadOnlyError(TypeError):
    """Raised on any attempt to change a cached (read-only) object."""

    def __init__(self, what: str = "") -> None:
        super().__init__(f"{what}: {_HINT}" if what else _HINT)


class MetadataOnlyError(LookupError):
    """Raised on reading a field a metadata-only cache does not hold (``spec``, ``status``, ``data``...).

    A metadata-only cache (``owns()``'s default) keeps ``PartialObjectMetadata``: apiVersion, kind
    and metadata. Answering ``None`` for ``status`` would make every Job look active, so the read
    fails instead. Deliberately not a KeyError: ``except KeyError`` must not swallow it.
    """

    def __init__(self, field: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata")
        name = meta.get("name", "?") if isinstance(meta, dict) else "?"
        super().__init__(
            f"{field!r} of {name!r} is not cached: this object comes from a metadata-only cache "
            "(PartialObjectMetadata: apiVersion, kind and metadata only); cache full objects with "
            "metadata_only=False (e.g. owns(..., metadata_only=False), watches(..., metadata_only=False) "
            "or Selection(metadata_only=False)), or GET the object from the API")
        self.field = field


_ABSENT: Any = object()
_PARTIAL_KIND = "PartialObjectMetadata"
_PARTIAL_FIELDS = frozenset(("apiVersion", "kind", "metadata"))


def _missing(raw: dict[str, Any], key: Any) -> bool:
    """True if ``key`` is absent only because ``raw`` is a metadata-only object (checked on misses
    only, so full objects pay nothing)."""
    return raw.get("kind") == _PARTIAL_KIND and key not in _PARTIAL_FIELDS and isinstance(key, str)


def _wrap(value: Any) -> Any:
    t = type(value)
    if t is dict:
        return FrozenDict(value)
    if t is list:
        return FrozenList(value)
    return value


def freeze(value: Any) -> Any:
    """A read-only view of ``value`` (dicts and lists are wrapped; scalars are returned as is)."""
    if isinstance(value, (FrozenDict, FrozenList)):
        return value
    return _wrap(value)


def unwrap(value: Any) -> Any:
    """The plain object behind a view (shared: callers must treat it as read-only)."""
    if isinstance(value, (FrozenDict, FrozenList)):
        return value._raw
    return value


def thaw(value: Any) -> Any:
    """A mutable deep copy of a view (plain dicts and lists); other values are deep-copied too."""
    raw = unwrap(value)
    if isinstance(raw, (dict, list)):
        return orjson.loads(orjson.dumps(raw))
    return raw


def to_builtin(value: Any) -> Any:
    """``value`` as plain dicts, lists and scalars (a deep, mutable copy): what ``json.dumps``, YAML,
    pickle or an equality test with a dict need of a cached object.

    Read-only views (what caches and ``ctx.get()`` return) are not ``dict``/``list`` subclasses, so
    ``json.dumps(view)`` raises ``TypeError``; ``json.dumps(to_builtin(view))`` works, as does
    ``json.dumps(view, default=json_default)``. Any nesting of mappings and sequences is copied the
    same way; other values are returned as they are.
    """
    raw = unwrap(value)
    if isinstance(raw, dict | list):
        with contextlib.suppress(TypeError):  # orjson: views nested in plain data, or ints past 64 bits
            return orjson.loads(orjson.dumps(raw, default=json_default))
    if isinstance(raw, Mapping):
        return {k: to_builtin(v) for k, v in raw.items()}
    if isinstance(raw, Sequence) and not isinstance(raw, str | bytes | bytearray):
        return [to_builtin(v) for v in raw]
    return raw


def json_default(value: Any) -> Any:
    """``default=`` hook for orjson.dumps / json.dumps that serializes views."""
    if isinstance(value, (FrozenDict, FrozenList)):
        return value._raw
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> bytes:
    """orjson-serialize a view (or anything orjson accepts)."""
    return orjson.dumps(unwrap(value), default=json_default)


class _ReadOnly:
    """What both views do the same way: compare, size and show their data, and refuse to set or
    delete attributes or to ``clear``."""

    __slots__ = ()
    _raw: Any

    def __len__(self) -> int:
        return len(self._raw)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _ReadOnly):
            other = other._raw
        return bool(self._raw == other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._raw!r})"

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise ReadOnlyError(f"cannot set attribute {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise ReadOnlyError(f"cannot delete attribute {name!r}")

    def clear(self) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot clear")


class FrozenDict(_ReadOnly, Mapping[str, Any]):
    """A read-only, zero-copy view of a dict; nested dicts/lists come back as views."""

    __slots__ = ("_raw",)
    __hash__ = None  # type: ignore[assignment]

    _raw: dict[str, Any]

    def __init__(self, raw: dict[str, Any]) -> None:
        _set_dict_raw(self, raw)

    def __getitem__(self, key: str) -> Any:
        try:
            v = self._raw[key]
        except KeyError:
            if _missing(self._raw, key):
                raise MetadataOnlyError(key, self._raw) from None
            raise
        t = type(v)
        if t is dict:
            return FrozenDict(v)
        if t is list:
            return FrozenList(v)
        return v

    def get(self, key: str, default: Any = None) -> Any:
        """Like dict.get; nested containers come back as views. A field a metadata-only object
        does not hold raises MetadataOnlyError rather than answering ``default``."""
        v = self._raw.get(key, _ABSENT)
        if v is _ABSENT:
            if _missing(self._raw, key):
                raise MetadataOnlyError(key, self._raw)
            return default
        t = type(v)
        if t is dict:
            return FrozenDict(v)
        if t is list:
            return FrozenList(v)
        return v

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __or__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        """A new plain (shallow) dict: this view's items updated with ``other``'s."""
        out = dict(self)
        out.update(other)
        return out

    def thaw(self) -> dict[str, Any]:
        """A mutable deep copy as plain dicts and lists."""
        return orjson.loads(orjson.dumps(self._raw))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        """deepcopy of a cached object gives a mutable plain copy (client-go's DeepCopy habit)."""
        return self.thaw()

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (self._raw,))

    # ---- every mutation raises
    def __setitem__(self, key: str, value: Any) -> NoReturn:
        raise ReadOnlyError(f"cannot set key {key!r}")

    def __delitem__(self, key: str) -> NoReturn:
        raise ReadOnlyError(f"cannot delete key {key!r}")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        raise ReadOnlyError("cannot update")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot update")

    def pop(self, *args: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot pop")

    def popitem(self) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot popitem")

    def setdefault(self, *args: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot setdefault")


class FrozenList(_ReadOnly, Sequence[Any]):
    """A read-only, zero-copy view of a list; nested dicts/lists come back as views."""

    __slots__ = ("_raw",)
    __hash__ = None  # type: ignore[assignment]

    _raw: list[Any]

    def __init__(self, raw: list[Any]) -> None:
        _set_list_raw(self, raw)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> FrozenList: ...

    def __getitem__(self, index: int | slice) -> Any:
        v = self._raw[index]
        if isinstance(index, slice):
            return FrozenList(v)
        return _wrap(v)

    def __iter__(self) -> Iterator[Any]:
        for v in self._raw:
            t = type(v)
            if t is dict:
                yield FrozenDict(v)
            elif t is list:
                yield FrozenList(v)
            else:
                yield v

    def __contains__(self, value: object) -> bool:
        return unwrap(value) in self._raw

    def __add__(self, other: Sequence[Any]) -> list[Any]:
        """A new plain (shallow) list."""
        return list(self) + list(other)

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        """Position of ``value`` (views compare by content)."""
        return self._raw.index(unwrap(value), start, len(self._raw) if stop is None else stop)

    def count(self, value: Any) -> int:
        """Occurrences of ``value``."""
        return self._raw.count(unwrap(value))

    def thaw(self) -> list[Any]:
        """A mutable deep copy as plain lists and dicts."""
        return orjson.loads(orjson.dumps(self._raw))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return self.thaw()

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (self._raw,))

    # ---- every mutation raises
    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        raise ReadOnlyError("cannot set an item")

    def __delitem__(self, index: Any) -> NoReturn:
        raise ReadOnlyError("cannot delete an item")

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        raise ReadOnlyError("cannot extend")

    def __imul__(self, other: Any) -> NoReturn:
        raise ReadOnlyError("cannot extend")

    def append(self, value: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot append")

    def extend(self, values: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot extend")

    def insert(self, index: int, value: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot insert")

    def remove(self, value: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot remove")

    def pop(self, index: int = -1) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot pop")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot sort in place (use sorted(view))")

    def reverse(self) -> NoReturn:
        """Raises ReadOnlyError."""
        raise ReadOnlyError("cannot reverse in place (use reversed(view))")


# Slot setters that bypass the raising __setattr__ (and are faster than object.__setattr__).
_set_dict_raw = FrozenDict.__dict__["_raw"].__set__
_set_list_raw = FrozenList.__dict__["_raw"].__set__
