"""Event handlers: how a change of a watched object becomes the requests to reconcile.

One small object per way of enqueueing (controller-runtime's ``handler`` package):

- `EnqueueForObject`: the object itself (the primary kind, ``for_``);
- `EnqueueForOwner`: the object's controller owner of the primary kind (``owns``), or every
  such owner with ``match_every_owner``;
- `EnqueueMapped`: whatever a map function returns (``watches``).

For an update, owners and mapped requests are computed from both the old and the new object,
so a reference that was removed still reconciles the object it used to point at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from kubeloop.cache import Event
from kubeloop.controller._request import Request
from kubeloop.meta import DELETED, MODIFIED

MapResult = Iterable[Request | tuple[str, str] | str] | Request | str | None
MapFn = Callable[[Mapping[str, Any]], MapResult]
"""obj (read-only) -> requests: `Request`s, (namespace, name) pairs or names (same cluster and namespace).

A bare `Request` or a bare name (a ``str``) counts as one request: ``lambda cm: cm["data"]["owner"]``
reconciles that one object, not one per letter.
"""


class PrimaryKind(NamedTuple):
    """The primary kind as discovery resolved it on one cluster (what owner references are matched to)."""

    group: str
    kind: str
    namespaced: bool


class EventHandler(Protocol):
    """Turns one watch event into requests (may raise: the run logs and drops that event)."""

    @property
    def role(self) -> str:
        """``for``, ``owns`` or ``watches``: for logs and descriptions."""
        ...

    def requests(self, ev: Event, primary: PrimaryKind) -> Iterable[Request]:
        """The requests ``ev`` concerns."""
        ...


@dataclass(frozen=True, slots=True)
class EnqueueForObject:
    """Reconcile the changed object itself."""

    role: str = field(default="for", init=False)

    def requests(self, ev: Event, primary: PrimaryKind) -> Iterable[Request]:
        return (Request(ev.cluster, ev.namespace, ev.name),)


def group_of(api_version: str) -> str:
    """The API group of an apiVersion ("" for the core group)."""
    return api_version.rpartition("/")[0]


def owner_requests(obj: Mapping[str, Any] | None, cluster: str, primary: PrimaryKind, match_every_owner: bool,
                   out: set[Request]) -> None:
    """Add to ``out`` the requests of ``obj``'s owners of the primary kind."""
    if obj is None:
        return
    meta = obj.get("metadata") or {}
    ns = (meta.get("namespace") or "") if primary.namespaced else ""
    for ref in meta.get("ownerReferences") or ():
        if not match_every_owner and not ref.get("controller"):
            continue
        if ref.get("kind") == primary.kind and group_of(ref.get("apiVersion") or "") == primary.group:
            name = ref.get("name")
            if name:
                out.add(Request(cluster, ns, name))
        if not match_every_owner:
            return  # only the one controller reference


def mapped_requests(obj: Mapping[str, Any] | None, cluster: str, map_fn: MapFn, out: set[Request]) -> None:
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
    if isinstance(got, str):  # one name, not an iterable of letters
        out.add(Request(cluster, ns, got))
        return
    if isinstance(got, (bytes, Mapping)):
        raise TypeError(f"map function returned {type(got).__name__} {got!r}; expected a Request, a name, "
                        "or an iterable of Requests, (namespace, name) pairs or names")
    for item in got:
        if isinstance(item, Request):
            out.add(item)
        elif isinstance(item, tuple):
            out.add(Request(cluster, item[0], item[1]))
        elif isinstance(item, str):
            out.add(Request(cluster, ns, item))
        else:
            raise TypeError(f"map function returned {item!r}; expected Request, (namespace, name) or name")


def _current(ev: Event) -> Mapping[str, Any] | None:
    return ev.new if ev.type != DELETED else ev.old


@dataclass(frozen=True, slots=True)
class EnqueueForOwner:
    """Reconcile the changed object's controller owner of the primary kind (every owner of it with
    ``match_every_owner``)."""

    match_every_owner: bool = False
    role: str = field(default="owns", init=False)

    def requests(self, ev: Event, primary: PrimaryKind) -> Iterable[Request]:
        out: set[Request] = set()
        owner_requests(_current(ev), ev.cluster, primary, self.match_every_owner, out)
        if ev.type == MODIFIED:
            owner_requests(ev.old, ev.cluster, primary, self.match_every_owner, out)
        return out


@dataclass(frozen=True, slots=True)
class EnqueueMapped:
    """Reconcile what ``map_fn(obj)`` returns for the changed object (before and after an update)."""

    map_fn: MapFn = field(compare=False)
    role: str = field(default="watches", init=False)

    def requests(self, ev: Event, primary: PrimaryKind) -> Iterable[Request]:
        out: set[Request] = set()
        mapped_requests(_current(ev), ev.cluster, self.map_fn, out)
        if ev.type == MODIFIED:
            mapped_requests(ev.old, ev.cluster, self.map_fn, out)
        return out
