"""Scope keys: what one informer watches, and when a narrower request can reuse a broader one.

A `Scope` is the key of the shared cache's informer map: cluster, resolved resource
(``group/version/plural``), namespace, label and field selectors, metadata-only, and the
identities of the transform and filter. Two requests with equal scopes share one informer.

`Scope.covers(narrow)` says whether every object `narrow` would store is also stored by this
(broader) scope, in the same or a fuller form: same cluster, resource and transform, full objects
for a metadata-only scope, and a namespace/selector/filter that is at least as wide. Selector
subset checks are conservative (`LabelSelector.is_subset_of`, `FieldSelector.implies`): a `False`
only costs an extra watch. `Scope.narrowing(narrow)` returns the predicate that picks `narrow`'s
objects out of the broad informer's (None when nothing needs filtering), and `Scope.projection`
the function that turns a full object into the ``PartialObjectMetadata`` a metadata-only scope
holds (None when the forms are the same): a metadata-only ``owns()`` beside a full informer of the
same kind reads and hears exactly what its own watch would give, without a second watch.

`Selection` is the user's side of a scope: what to keep of one resource (namespace, selectors,
metadata-only, transform), one value passed from the manager or a controller to the shared cache
instead of the same five keyword arguments in every signature on the way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar, Unpack

from kubeloop.cache._entry import field_value
from kubeloop.cache._frozen import FrozenDict, unwrap
from kubeloop.cache._transform import DEFAULT_TRANSFORM, Filter, Transform
from kubeloop.meta import (
    FieldSelector,
    FieldSelectorLike,
    LabelSelector,
    LabelSelectorLike,
    as_field_selector,
    as_label_selector,
)

__all__ = ["Predicate", "Project", "Scope", "Selection", "SelectionKeywords", "combine_fields", "combine_labels",
           "partial_object_metadata"]


class SelectionKeywords(TypedDict, total=False):
    """The `Selection` fields as keyword arguments (the convenience form where users write them)."""

    namespace: str | None
    label_selector: LabelSelectorLike | None
    field_selector: FieldSelectorLike | None
    metadata_only: bool
    transform: Transform | None


@dataclass(frozen=True, slots=True)
class Selection:
    """What an informer keeps of one resource.

    - ``namespace``: None means every namespace.
    - ``label_selector`` / ``field_selector``: text, a ``{key: value}`` mapping or a parsed selector.
    - ``metadata_only``: keep ``PartialObjectMetadata`` only (names, labels, owners).
    - ``transform``: applied to each object before it is stored (default: drop managedFields;
      None stores objects as served). Compared by identity when informers are shared.
    """

    namespace: str | None = None
    label_selector: LabelSelectorLike | None = None
    field_selector: FieldSelectorLike | None = None
    metadata_only: bool = False
    transform: Transform | None = DEFAULT_TRANSFORM

    def __post_init__(self) -> None:
        if self.namespace is not None and not isinstance(self.namespace, str):
            raise TypeError(f"Selection.namespace must be a str or None, not {type(self.namespace).__name__}")
        if self.transform is not None and not callable(self.transform):
            raise TypeError(f"Selection.transform must be callable or None, not {self.transform!r}")

    @classmethod
    def merged(cls, selection: Selection | None, keywords: SelectionKeywords) -> Selection:
        """``selection`` (default: everything, default transform) with the keywords given on top."""
        base = selection if selection is not None else _EVERYTHING
        unknown = set(keywords) - _SELECTION_FIELDS
        if unknown:
            raise TypeError(f"unexpected selection option(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(base, **keywords) if keywords else base

Predicate = Callable[[Mapping[str, Any]], bool]
"""obj (read-only view) -> is it inside the narrower scope?"""

Project = Callable[[FrozenDict], FrozenDict]
"""obj (read-only view) -> the form a narrower scope holds it in."""


def partial_object_metadata(obj: FrozenDict) -> FrozenDict:
    """The ``PartialObjectMetadata`` of a full object: what a metadata-only informer stores (the
    server's ``as=PartialObjectMetadata`` answer, managedFields as the transform left them)."""
    raw = unwrap(obj)
    if raw.get("kind") == "PartialObjectMetadata":
        return obj
    return FrozenDict({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": raw.get("metadata")})

_EMPTY_LABELS = LabelSelector()
_EMPTY_FIELDS = FieldSelector()




_S = TypeVar("_S", LabelSelector, FieldSelector)


def _conjunction(a: _S | None, b: _S | None) -> _S | None:
    if a is None or a.empty:
        return b
    return a if b is None else a & b


def combine_labels(a: LabelSelector | None, b: LabelSelector | None) -> LabelSelector | None:
    """The conjunction of two label selectors (None stands for "everything")."""
    return _conjunction(a, b)


def combine_fields(a: FieldSelector | None, b: FieldSelector | None) -> FieldSelector | None:
    """The conjunction of two field selectors (None stands for "everything")."""
    return _conjunction(a, b)


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


@dataclass(frozen=True, slots=True)
class Scope:
    """What one informer watches and how it stores it (hashable: the shared cache's key).

    `namespace` None means all namespaces (always None for cluster-scoped resources).
    `resource` is ``group/version/plural`` once resolved (core group as ``core``), else the
    reference text as given (a kind whose CRD is not installed yet).
    """

    cluster: str
    resource: str
    namespace: str | None = None
    label_selector: LabelSelector = _EMPTY_LABELS
    field_selector: FieldSelector = _EMPTY_FIELDS
    metadata_only: bool = False
    transform: Transform | None = None
    filter: Filter | None = None

    @classmethod
    def of(cls, cluster: str, resource: str, selection: Selection | None = None, *,
           filter: Filter | None = None, **keywords: Unpack[SelectionKeywords]) -> Scope:
        """The scope of ``selection`` (and/or its fields as keywords; selectors as text, mappings
        or parsed) on ``resource`` of ``cluster``."""
        sel = Selection.merged(selection, keywords)
        return cls(cluster, resource, sel.namespace or None, as_label_selector(sel.label_selector),
                   as_field_selector(sel.field_selector), sel.metadata_only, sel.transform, filter)

    def covers(self, narrow: Scope) -> bool:
        """True if every object `narrow` would store is stored here, in the same form."""
        if self == narrow:
            return True
        if (self.cluster, self.resource) != (narrow.cluster, narrow.resource):
            return False
        if self.metadata_only and not narrow.metadata_only:
            return False  # full objects are not in a metadata-only store (the reverse is a projection)
        if self.transform is not narrow.transform:
            return False  # a differently transformed object must never be shared
        if self.filter is not None and self.filter is not narrow.filter:
            return False
        if self.namespace is not None and self.namespace != narrow.namespace:
            return False
        if not self.label_selector.empty and not narrow.label_selector.is_subset_of(self.label_selector):
            return False
        if not self.field_selector.empty:
            narrow_fields = narrow.field_selector
            if narrow.namespace is not None:
                narrow_fields = combine_fields(narrow_fields, FieldSelector.from_fields(
                    {"metadata.namespace": narrow.namespace})) or narrow_fields
            if not narrow_fields.implies(self.field_selector):
                return False
        return True

    def narrowing(self, narrow: Scope) -> Predicate | None:
        """The predicate selecting `narrow`'s objects among this scope's (None: take them all).

        Only meaningful when `self.covers(narrow)`. Checks are re-done even where the broad scope
        already guarantees them; they are cheap next to decoding.
        """
        ns = narrow.namespace if narrow.namespace != self.namespace else None
        lsel = narrow.label_selector if narrow.label_selector != self.label_selector and narrow.label_selector else None
        fsel = narrow.field_selector if narrow.field_selector != self.field_selector and narrow.field_selector else None
        flt = narrow.filter if narrow.filter is not self.filter else None
        if ns is None and lsel is None and fsel is None and flt is None:
            return None

        def predicate(obj: Mapping[str, Any]) -> bool:
            md = obj.get("metadata") or {}
            if ns is not None and (md.get("namespace") or "") != ns:
                return False
            if lsel is not None and not lsel.matches(md.get("labels") or {}):
                return False
            if fsel is not None and not all(
                r.matches({r.field: field_value(obj, r.field)}) for r in fsel.requirements
            ):
                return False
            return flt is None or bool(flt(obj))

        return predicate

    def projection(self, narrow: Scope) -> Project | None:
        """The function giving `narrow`'s form of this scope's objects (None: the same form). Only
        meaningful when `self.covers(narrow)`."""
        return partial_object_metadata if narrow.metadata_only and not self.metadata_only else None

    def describe(self) -> str:
        """A one-line human description for logs and readiness reports."""
        parts = [f"{self.cluster}:{self.resource}"]
        if self.namespace:
            parts.append(f"namespace={self.namespace}")
        if self.label_selector:
            parts.append(f"labels={self.label_selector}")
        if self.field_selector:
            parts.append(f"fields={self.field_selector}")
        if self.metadata_only:
            parts.append("metadata-only")
        if self.transform is not DEFAULT_TRANSFORM:
            parts.append(f"transform={_name(self.transform)}")
        if self.filter is not None:
            parts.append(f"filter={_name(self.filter)}")
        return " ".join(parts)

    def __str__(self) -> str:
        return self.describe()


_EVERYTHING = Selection()
_SELECTION_FIELDS = frozenset(f.name for f in dataclasses.fields(Selection))
