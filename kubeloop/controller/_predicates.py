"""Event filters for controller sources: which changes are worth a reconcile.

A predicate sees the object before and after a change (`old` is None for a creation, `new` is
None for a deletion) and says whether the change should enqueue a request. They compose with
`|`, `&` and `~`.

Status-only writes do not bump `metadata.generation` (for kinds with a status subresource), so
`generation_changed` on a controller's primary resource stops the controller's own status writes
from triggering another reconcile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.meta import metadata_of, semantically_equal

Obj = Mapping[str, Any]
PredicateFn = Callable[[Obj | None, Obj | None], bool]


class Predicate:
    """A composable filter over (old, new)."""

    __slots__ = ("_fn", "_name")

    def __init__(self, fn: PredicateFn, name: str | None = None) -> None:
        self._fn = fn
        self._name = name or getattr(fn, "__name__", "predicate")

    def __call__(self, old: Obj | None, new: Obj | None) -> bool:
        return self._fn(old, new)

    def __or__(self, other: Predicate | PredicateFn) -> Predicate:
        o = as_predicate(other)
        return Predicate(lambda a, b: self._fn(a, b) or o(a, b), f"({self._name} | {o._name})")

    def __and__(self, other: Predicate | PredicateFn) -> Predicate:
        o = as_predicate(other)
        return Predicate(lambda a, b: self._fn(a, b) and o(a, b), f"({self._name} & {o._name})")

    def __invert__(self) -> Predicate:
        return Predicate(lambda a, b: not self._fn(a, b), f"~{self._name}")

    def __repr__(self) -> str:
        return f"Predicate({self._name})"


def as_predicate(p: Predicate | PredicateFn) -> Predicate:
    """Accept a plain function of (old, new) wherever a predicate is expected."""
    return p if isinstance(p, Predicate) else Predicate(p)


def predicate(fn: PredicateFn) -> Predicate:
    """Decorator turning a function of (old, new) into a composable `Predicate`."""
    return Predicate(fn)


def _on_update(field: Callable[[Mapping[str, Any]], Any], name: str) -> Predicate:
    """Creations and deletions pass; an update passes when `field(metadata)` differs (as the API
    server compares values: `semantically_equal`)."""

    def check(old: Obj | None, new: Obj | None) -> bool:
        if old is None or new is None:
            return True
        return not semantically_equal(field(metadata_of(old)), field(metadata_of(new)))

    return Predicate(check, name)


generation_changed = _on_update(lambda m: m.get("generation"), "generation_changed")
labels_changed = _on_update(lambda m: m.get("labels") or {}, "labels_changed")
annotations_changed = _on_update(lambda m: m.get("annotations") or {}, "annotations_changed")
resource_version_changed = _on_update(lambda m: m.get("resourceVersion"), "resource_version_changed")
finalizers_changed = _on_update(lambda m: m.get("finalizers") or [], "finalizers_changed")


@predicate
def deleting(old: Obj | None, new: Obj | None) -> bool:
    """The object (after the change) is being deleted: `deletionTimestamp` is set."""
    return new is not None and bool(metadata_of(new).get("deletionTimestamp"))


@predicate
def always(old: Obj | None, new: Obj | None) -> bool:
    """Every change passes."""
    return True
