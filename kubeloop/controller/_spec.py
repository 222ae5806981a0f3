"""What a controller is, as frozen values: `ControllerSpec` and the `SourceSpec` of each watched kind.

The fluent builder (`Controller(...).owns(...).watches(...)`) produces these; each run only
reads them. Keeping the specification immutable and apart from the running state means a
controller can be described (manifests, RBAC, the Manager's informer warm-up) without running,
and restarted from the same description.

Three kinds of source, as in controller-runtime's builder, each with its event handler
(`kubeloop.controller._handlers`):

- ``for_``: the primary kind; a change of an object enqueues that object.
- ``owns``: a child kind; a change enqueues the child's controller owner of the primary kind.
  Owned kinds are watched metadata-only by default: ownerReferences live in metadata.
- ``watches``: any kind, in any namespace or cluster; ``map_fn(obj)`` says which requests a change
  of ``obj`` concerns (typically through an index of the primary's cache).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kubeloop.cache import Filter, IndexFunc, InformerHandle, Scope, Selection, SharedCache
from kubeloop.client import ResourceRef
from kubeloop.controller._handlers import EnqueueForObject, EventHandler
from kubeloop.controller._predicates import Predicate, PredicateFn, as_predicate
from kubeloop.controller._request import Request, Result
from kubeloop.queue import RateLimiter, WorkQueueCore

if TYPE_CHECKING:
    from kubeloop.controller._context import Context

SuppressOwnWrites = Literal["reconciled_object", "all"]
"""Which watch events caused only by a reconcile's own writes do not enqueue anything:

- ``"reconciled_object"`` (default, controller-runtime's behaviour for children): only writes to
  the object being reconciled (its status, finalizers, labels) that the reconcile based on what
  it had read; a child it created, changed or deleted reconciles its owner again, as any change
  of a child does (deduplicated with what is already queued);
- ``"all"``: every own write, children included: fewer reconciles, safe because ``ctx.owned()``
  and ``ctx.reader()`` show the reconcile's own writes before the cache does, but a controller
  that derives status from its children must then requeue itself to see later changes of them.
"""

ReconcileFn = Callable[[Request, "Context"], Awaitable[Result | None]]
Predicates = Iterable[Predicate | PredicateFn] | Predicate | PredicateFn | None


def combine_predicates(preds: Predicates) -> Predicate | None:
    """Several predicates as one (all must pass); None for none."""
    if preds is None:
        return None
    if callable(preds):
        return as_predicate(preds)
    out: Predicate | None = None
    for p in preds:
        out = as_predicate(p) if out is None else out & p
    return out


@dataclass(frozen=True)
class SourceSpec:
    """One informer scope a controller needs and the handler that turns its changes into requests.

    ``selection`` is what the informer keeps (the cache's own `Selection`: namespace, selectors,
    metadata-only, transform) and ``filter`` which of those objects it stores; ``cluster`` None means
    "every cluster the controller runs on". The Manager reads ``Controller.sources`` to know which
    informers to start (`open`).
    """

    resource: str
    handler: EventHandler = field(default_factory=EnqueueForObject)
    selection: Selection = field(default_factory=Selection)
    cluster: str | None = None
    filter: Filter | None = None
    predicate: Predicate | None = None

    def __post_init__(self) -> None:
        ResourceRef.parse(self.resource)  # fail early, with the client's readable message
        if not isinstance(self.selection, Selection):
            raise TypeError(f"SourceSpec.selection takes a kubeloop.cache.Selection, not {self.selection!r}")

    @property
    def role(self) -> str:
        """``for``, ``owns`` or ``watches`` (the handler's role)."""
        return self.handler.role

    async def open(self, cache: SharedCache, cluster: str) -> InformerHandle:
        """A handle on the shared informer of this scope on ``cluster`` (give it back with ``release``)."""
        return await cache.informer_for(cluster, self.resource, self.selection, filter=self.filter)

    def describe(self) -> str:
        """One line for logs: the role, then the scope as the cache describes it (``*``: every cluster)."""
        scope = Scope.of(self.cluster or "*", self.resource, self.selection, filter=self.filter)
        return f"{self.role} {scope.describe()}"


def _check_reconcile(reconcile: object) -> None:
    call = type(reconcile).__call__ if not inspect.isfunction(reconcile) else None
    if not (inspect.iscoroutinefunction(reconcile) or inspect.iscoroutinefunction(call)):
        raise TypeError(f"reconcile must be an async function (request, ctx), not {reconcile!r}")


PrimaryWrites = Literal["object", "status", "none"]
"""What a reconcile writes of its primary (``Controller(primary_writes=...)``): the object itself
(finalizers, labels, ...) and its status, only its status, or nothing."""


@dataclass(frozen=True)
class Target:
    """A kind the reconcile reads with ``ctx.watch_target`` (an entry of ``Controller(targets=[...])``,
    where a plain ``group/version/Kind`` means ``Target(kind)``), and where it is read.

    - ``namespace``: the targets of this kind are all in this namespace: their cache watches only
      it (so a ServiceAccount allowed only there can read them), ``kubeloop manifests`` grants a
      Role there, and ``watch_target`` of one elsewhere raises `TargetNotDeclared`.
    - ``remote``: they are read only in clusters other than the manager's own (``cluster=`` names
      another one): ``kubeloop manifests`` grants nothing for them in the management cluster
      (``--for-cluster NAME`` prints what another cluster needs), and ``watch_target`` of one in the
      manager's own cluster raises `TargetNotDeclared`.
    """

    kind: str
    namespace: str | None = None
    remote: bool = False

    def __post_init__(self) -> None:
        ResourceRef.parse(self.kind)
        if self.namespace is not None and (not isinstance(self.namespace, str) or not self.namespace):
            raise ValueError(f"Target({self.kind!r}): namespace must be a non-empty name or None, "
                             f"not {self.namespace!r}")


@dataclass(frozen=True)
class ControllerSpec:
    """Everything that defines a controller (see `Controller` for the options' meaning)."""

    name: str
    reconcile: ReconcileFn
    sources: tuple[SourceSpec, ...]
    indexes: tuple[tuple[str, IndexFunc], ...] = ()
    max_concurrent_reconciles: int = 1
    reconcile_timeout: float | None = None
    rate_limiter: RateLimiter | None = None
    debounce: float = 0.0
    debounce_max_wait: float | None = None
    clusters: tuple[str, ...] | None = None
    field_manager: str = ""
    read_your_writes: bool = True
    read_your_writes_timeout: float = 2.0
    suppress_own_writes: SuppressOwnWrites = "reconciled_object"
    cache_sync_timeout: float = 120.0
    record_events: bool = True
    logger: logging.Logger | None = None
    writes: tuple[str, ...] = ()
    """Kinds the reconcile writes through ``ctx.client`` besides the primary's status and its owned
    children (read by ``kubeloop manifests`` for the RBAC rules: create, update, patch, delete)."""
    targets: tuple[Target, ...] | None = None
    """Kinds the reconcile reads with ``ctx.watch_target`` (``group/version/Kind`` or a plural, and
    where: `Target`), or None: any kind, and no rule derived. Declared, they are the only ones it may
    read (another is a `TargetNotDeclared` error, found by the first test that asks for it) and
    ``kubeloop manifests`` grants get, list, watch on each (at the cluster scope, or in the
    target's namespace)."""
    primary_writes: PrimaryWrites = "object"
    """What the reconcile writes of its primary, for ``kubeloop manifests``: ``"object"`` (update
    and patch on it, for finalizers and metadata, and on its status), ``"status"`` (its status
    only) or ``"none"`` (a read-only controller: no write rule on the primary's kind)."""

    def __post_init__(self) -> None:
        name = self.name
        for w in self.writes:
            ResourceRef.parse(w)
        if self.primary_writes not in ("object", "status", "none"):
            raise ValueError(f"primary_writes must be 'object', 'status' or 'none', not {self.primary_writes!r}")
        if not name or not name.replace("-", "_").replace(".", "_").isidentifier():
            raise ValueError(f"controller name {name!r} must be non-empty letters, digits, '-', '_' or '.'")
        if self.max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        # the queue's own checks (debounce, debounce_max_wait), now: each run builds its queue later
        WorkQueueCore(rate_limiter=self.rate_limiter, debounce=self.debounce, debounce_max_wait=self.debounce_max_wait)
        if not self.sources or self.sources[0].role != "for":
            raise ValueError(f"controller {name!r}: the first source must be the primary (for_)")
        _check_reconcile(self.reconcile)
        if self.suppress_own_writes not in ("reconciled_object", "all"):
            raise ValueError(f"suppress_own_writes must be 'reconciled_object' or 'all', "
                             f"not {self.suppress_own_writes!r}")
        if not self.field_manager:
            object.__setattr__(self, "field_manager", name)

    @property
    def primary(self) -> SourceSpec:
        """The ``for_`` source."""
        return self.sources[0]

    def sources_on(self, cluster: str) -> list[SourceSpec]:
        """The sources it opens on ``cluster``: those pinned there, and the unpinned ones when it runs
        on every cluster or its ``clusters`` name this one."""
        everywhere = self.clusters is None or cluster in self.clusters
        return [s for s in self.sources if s.cluster == cluster or (s.cluster is None and everywhere)]

    @functools.cached_property
    def log(self) -> logging.Logger:
        """The controller's logger (``kubeloop.controller.<name>`` unless one was given); looked up once
        (the event path reads it for every change)."""
        return self.logger or logging.getLogger(f"kubeloop.controller.{self.name}")
