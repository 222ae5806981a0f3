"""What a controller watches (`SourceSpec`) and how a change becomes requests (`requests_for`).

Three roles, as in controller-runtime's builder:

- ``for``: the primary kind; a change of an object enqueues that object.
- ``owns``: a child kind; a change enqueues the child's controller owner (the ownerReference with
  ``controller: true``, or every owner with ``match_every_owner``) when the owner is of the primary
  kind. Owned kinds are watched metadata-only by default: ownerReferences live in metadata.
- ``watches``: any kind, in any namespace or cluster; ``map_fn(obj)`` says which requests a change
  of ``obj`` concerns (typically through an index of the primary's cache).

For an update, owners and mapped requests are computed from both the old and the new object,
so a reference that was removed still reconciles the object it used to point at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kubeloop.cache import DEFAULT_TRANSFORM, Transform
from kubeloop.controller.predicates import Predicate, PredicateFn, as_predicate
from kubeloop.controller.request import Request

Role = Literal["for", "owns", "watches"]

MapResult = Iterable[Request | tuple[str, str] | str] | Request | None
MapFn = Callable[[Mapping[str, Any]], MapResult]
"""obj (read-only) -> requests: `Request`s, (namespace, name) pairs or names (same cluster and namespace)."""


@dataclass(frozen=True)
class SourceSpec:
    """One informer scope a controller needs and what it does with its events.

    ``cluster`` None means "every cluster the controller runs on". The Manager reads
    ``Controller.sources`` to know which informers to start (``informer_args``).
    """

    role: Role
    resource: str
    cluster: str | None = None
    namespace: str | None = None
    label_selector: str | Mapping[str, str] | None = None
    field_selector: str | Mapping[str, str] | None = None
    metadata_only: bool = False
    transform: Transform | None = DEFAULT_TRANSFORM
    predicate: Predicate | None = None
    map_fn: MapFn | None = field(default=None, compare=False)
    match_every_owner: bool = False

    def informer_args(self) -> dict[str, Any]:
        """Keyword arguments for ``SharedCache.informer_for(cluster, resource, **args)``."""
        return {
            "namespace": self.namespace,
            "label_selector": self.label_selector,
            "field_selector": self.field_selector,
            "metadata_only": self.metadata_only,
            "transform": self.transform,
        }

    def describe(self) -> str:
        """One line for logs."""
        bits = [self.role, self.resource]
        if self.cluster:
            bits.append(f"cluster={self.cluster}")
        if self.namespace:
            bits.append(f"namespace={self.namespace}")
        if self.label_selector:
            bits.append(f"labels={self.label_selector}")
        if self.metadata_only:
            bits.append("metadata-only")
        return " ".join(bits)


def combine_predicates(preds: Iterable[Predicate | PredicateFn] | Predicate | PredicateFn | None) -> Predicate | None:
    """Several predicates as one (all must pass); None for none."""
    if preds is None:
        return None
    if callable(preds):
        return as_predicate(preds)
    out: Predicate | None = None
    for p in preds:
        out = as_predicate(p) if out is None else out & p
    return out


def group_of(api_version: str) -> str:
    """The API group of an apiVersion ("" for the core group)."""
    return api_version.rpartition("/")[0]


def owner_requests(
    obj: Mapping[str, Any] | None,
    cluster: str,
    owner_group: str,
    owner_kind: str,
    owner_namespaced: bool,
    match_every_owner: bool,
    out: set[Request],
) -> None:
    """Add to ``out`` the requests of ``obj``'s owners of the given group and kind."""
    if obj is None:
        return
    meta = obj.get("metadata") or {}
    ns = (meta.get("namespace") or "") if owner_namespaced else ""
    for ref in meta.get("ownerReferences") or ():
        if not match_every_owner and not ref.get("controller"):
            continue
        if ref.get("kind") == owner_kind and group_of(ref.get("apiVersion") or "") == owner_group:
            name = ref.get("name")
            if name:
                out.add(Request(cluster, ns, name))
        if not match_every_owner:
            return  # only the one controller reference


def mapped_requests(
    obj: Mapping[str, Any] | None, cluster: str, map_fn: MapFn, out: set[Request]
) -> None:
    """Add to ``out`` what ``map_fn(obj)`` returns, normalised to `Request`s."""
    if obj is None:
        return
    got = map_fn(obj)
    if got is None:
        return
    if isinstance(got, Request):
        out.add(got)
        return
    ns = (obj.get("metadata") or {}).get("namespace") or ""
    for item in got:
        if isinstance(item, Request):
            out.add(item)
        elif isinstance(item, tuple):
            out.add(Request(cluster, item[0], item[1]))
        elif isinstance(item, str):
            out.add(Request(cluster, ns, item))
        else:
            raise TypeError(f"map function returned {item!r}; expected Request, (namespace, name) or name")
