"""`ValueIndex`: an index whose function returns ``{key: value}`` pairs, looked up as values (kopf's
index semantics: "the value computed for key K, across objects", not only "the objects under K").

    pods = manager.informer("v1/Pod", indexes={"ip-by-app": ValueIndex(lambda p: {app(p): ip(p)})})
    pods.values("ip-by-app", "web")          # -> ["10.0.0.4", "10.0.0.7"]: one value per Pod

It is an ordinary index function (the store files each object under the dict's keys), so it
registers wherever an index does (``Manager.informer(indexes=...)``, ``Controller.index()``,
``InformerHandle.add_index()``) and costs what an index costs: values are never stored, but
computed again from the (read-only) objects of ``by_index(name, key)`` on each ``values()`` call.
So a value is always the one the current object gives, and keeping it costs no memory; keep the
function cheap, as every index function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["ValueFunc", "ValueIndex", "value_index"]

ValueFunc = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
"""obj (read-only view) -> ``{key: value}`` (None or ``{}``: the object is not indexed)."""


class ValueIndex:
    """Wrap a `ValueFunc` as an index function; ``reader.values(name, key)`` reads its values."""

    __slots__ = ("fn",)

    def __init__(self, fn: ValueFunc) -> None:
        if not callable(fn):
            raise TypeError(f"ValueIndex needs a function obj -> {{key: value}}, got {fn!r}")
        self.fn = fn

    def __call__(self, obj: Mapping[str, Any]) -> list[str]:
        """The index keys of ``obj``: the keys of the dict the function returns."""
        got = self.fn(obj)
        if not got:
            return []
        if not isinstance(got, Mapping):
            raise TypeError(f"value index function {_name(self.fn)} returned {type(got).__name__}, "
                            "not a dict {key: value}")
        return list(got)

    def values(self, objects: Iterable[Mapping[str, Any]], key: str) -> list[Any]:
        """The value each of ``objects`` gives for ``key`` (an object that gives none is skipped)."""
        fn = self.fn
        out = []
        for obj in objects:
            got = fn(obj)
            if got and key in got:
                out.append(got[key])
        return out

    def __eq__(self, other: object) -> bool:
        # two wrappers of one function are one index (declaring it twice is then a no-op)
        return isinstance(other, ValueIndex) and other.fn is self.fn

    def __hash__(self) -> int:
        return hash(self.fn)

    def __repr__(self) -> str:
        return f"ValueIndex({_name(self.fn)})"


def value_index(name: str, fn: object) -> ValueIndex:
    """The `ValueIndex` registered as ``name`` (``fn``), or a `TypeError` saying how to register one."""
    if isinstance(fn, ValueIndex):
        return fn
    raise TypeError(f"index {name!r} is not a value index (it files objects by key, it has no values): "
                    "register it as ValueIndex(fn) with fn returning {key: value}, and read it with values()")


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
