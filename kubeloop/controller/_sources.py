"""The sources of a controller run: each `SourceSpec` bound to a cluster's informer.

A `ClusterEngagement` binds the sources of its cluster (`BoundSource`) and registers them in the
run's one `SourceSet`, which answers the lookups by (cluster, resource) and by (cluster, group,
kind): the reader a reconcile asks for, the cached object a write is compared with (read your
writes), whether an informer of the controller could ever show a write, and whether a kind is the
primary one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.cache import CacheReader, Event, FrozenDict, InformerHandle, Subscription
from kubeloop.controller._handlers import PrimaryKind
from kubeloop.controller._readyourwrites import ObjectKey
from kubeloop.controller._spec import SourceSpec


@dataclass(eq=False)
class BoundSource:
    """A source bound to one cluster while the controller runs."""

    spec: SourceSpec
    cluster: str
    handle: InformerHandle
    group: str
    kind: str
    primary: PrimaryKind
    sub: Subscription | None = None
    sink: Callable[[Event], None] | None = None  # where its events go (live, and what the pump delivers)
    dropped: bool = False  # given back (its cluster was forgotten, or the run ended)

    @property
    def store(self) -> CacheReader:
        """The informer's reader for this source's scope."""
        return self.handle.reader


class SourceSet:
    """The bound sources of one run, indexed for the run's lookups.

    ``primary_kind``: the primary kind as the first cluster's discovery resolved it (what owner
    references are matched to), set by the first engagement that opens its sources.
    """

    def __init__(self, controller: str) -> None:
        self.controller = controller
        self.sources: list[BoundSource] = []
        self.primary_kind: PrimaryKind | None = None
        self._by_resource: dict[tuple[str, str], BoundSource] = {}
        self._by_gk: dict[tuple[str, str, str], list[BoundSource]] = {}

    def add(self, src: BoundSource) -> None:
        """Register a source (the first one of a (cluster, resource) answers `source`)."""
        self.sources.append(src)
        self._by_resource.setdefault((src.cluster, src.spec.resource), src)
        self._by_gk.setdefault((src.cluster, src.group, src.kind), []).append(src)

    def __iter__(self) -> Iterator[BoundSource]:
        return iter(self.sources)

    def primaries(self, cluster: str | None = None) -> list[BoundSource]:
        """The primary (``for_``) sources, of one cluster or all."""
        return [s for s in self.sources if s.spec.role == "for" and (cluster is None or s.cluster == cluster)]

    def source(self, cluster: str, resource: str) -> BoundSource:
        """The source of ``resource`` (as named in ``for_``/``owns``/``watches``) on ``cluster``."""
        src = self._by_resource.get((cluster, resource))
        if src is None:
            known = ", ".join(sorted({r for _, r in self._by_resource})) or "none"
            raise LookupError(f"{self.controller}: no cache of {resource!r} on cluster {cluster!r}; "
                              f"watch it with for_/owns/watches first (watched: {known})")
        return src

    def is_primary(self, cluster: str, group: str, kind: str) -> bool:
        """Whether (group, kind) is the primary kind on ``cluster`` (read your writes asks, to tell a
        write to the reconciled object from a write to a child)."""
        return any(s.spec.role == "for" for s in self._by_gk.get((cluster, group, kind), ()))

    def cached(self, key: ObjectKey) -> FrozenDict | None:
        """The cached object of ``key`` (a full object over a metadata-only one), or None."""
        cluster, group, kind, ns, name = key
        best = None
        for src in self._by_gk.get((cluster, group, kind), ()):
            obj = src.handle.reader.get(name, ns)
            if obj is not None:
                if not src.spec.selection.metadata_only:
                    return obj
                best = obj
        return best

    def observable(self, key: ObjectKey, obj: Mapping[str, Any] | None) -> bool:
        """True if some informer of the controller would show ``obj`` written at ``key``."""
        cluster, group, kind, ns, _ = key
        for src in self._by_gk.get((cluster, group, kind), ()):
            scope = src.handle.scope
            if scope.namespace is not None and scope.namespace != ns:
                continue
            labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
            if scope.label_selector and not scope.label_selector.matches(labels):
                continue
            return True
        return False

    def drop(self, gone: list[BoundSource]) -> None:
        """Close and forget these sources (their handles are given back; twice is once)."""
        gone = [s for s in gone if not s.dropped]
        if not gone:
            return
        for src in gone:
            src.dropped = True
            if src.sub is not None:
                src.sub.close()
            src.handle.release()
        kept = [s for s in self.sources if s not in gone]
        self.sources = []
        self._by_resource = {}
        self._by_gk = {}
        for src in kept:
            self.add(src)
