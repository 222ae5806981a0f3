"""kubeloop.controller: reconcile loops over shared caches (see docs/controllers.md).

``Controller(name, for_=..., reconcile=fn).owns(...).watches(...)``; ``reconcile(request, ctx)``
returns a ``Result`` or raises (``TerminalError``: do not retry).

Modules: ``_controller`` (the builder: a `Controller` is a specification), ``_spec`` (the frozen
`ControllerSpec`/`SourceSpec` it makes), ``_run`` (one run: queue, workers, results, drain; a
fresh one each time the controller runs), ``_engagement`` (one cluster of a run: its sources, pumps
and what waits for their sync), ``_sources`` (sources bound to informers), ``_handlers`` (event ->
requests), ``_context`` (what a reconcile gets, through ``_scope``'s narrow `RunView`),
``_readyourwrites`` (the write tracker behind the run's one seam to it), ``_apply``/``_status``
(no-op-skipping writes), ``_recorder`` (Kubernetes Events, `EventRecorder`), ``_targets``
(``ctx.watch_target``: dynamic targets, docs/targets.md), ``_logs`` (per-reconcile log fields),
``_errors``, plus the helpers below. Owner references are `kubeloop.meta`'s
(``set_controller_reference``, ``controller_of``, ...).
"""

from kubeloop.cache import CacheNotSynced  # what a reconcile may see; the cache raises it
from kubeloop.controller._context import Context, ResourceArg, TypedResource, resource_name
from kubeloop.controller._controller import Controller
from kubeloop.controller._errors import ControllerError
from kubeloop.controller._finalizers import (
    add_finalizer,
    finalize,
    has_finalizer,
    is_deleting,
    remove_finalizer,
)
from kubeloop.controller._handlers import (
    EnqueueForObject,
    EnqueueForOwner,
    EnqueueMapped,
    EventHandler,
    MapFn,
    PrimaryKind,
)
from kubeloop.controller._logs import RequestContextFilter
from kubeloop.controller._predicates import (
    Predicate,
    always,
    annotations_changed,
    deleting,
    finalizers_changed,
    generation_changed,
    labels_changed,
    predicate,
    resource_version_changed,
)
from kubeloop.controller._recorder import EventRecorder
from kubeloop.controller._request import Request, Result, TerminalError
from kubeloop.controller._run import Gate
from kubeloop.controller._scope import OverlayReader
from kubeloop.controller._spec import (
    ControllerSpec,
    PrimaryWrites,
    ReconcileFn,
    SourceSpec,
    SuppressOwnWrites,
    Target,
)
from kubeloop.controller._targets import (
    ClusterUnreachable,
    KindNotServed,
    TargetError,
    TargetForbidden,
    TargetNotDeclared,
    TargetNotSynced,
    UnknownCluster,
)

__all__ = [
    "CacheNotSynced",
    "ClusterUnreachable",
    "Context",
    "Controller",
    "ControllerError",
    "ControllerSpec",
    "EnqueueForObject",
    "EnqueueForOwner",
    "EnqueueMapped",
    "EventHandler",
    "EventRecorder",
    "Gate",
    "KindNotServed",
    "MapFn",
    "OverlayReader",
    "Predicate",
    "PrimaryKind",
    "PrimaryWrites",
    "ReconcileFn",
    "Request",
    "RequestContextFilter",
    "ResourceArg",
    "Result",
    "SourceSpec",
    "SuppressOwnWrites",
    "Target",
    "TargetError",
    "TargetForbidden",
    "TargetNotDeclared",
    "TargetNotSynced",
    "TerminalError",
    "TypedResource",
    "UnknownCluster",
    "add_finalizer",
    "always",
    "annotations_changed",
    "deleting",
    "finalize",
    "finalizers_changed",
    "generation_changed",
    "has_finalizer",
    "is_deleting",
    "labels_changed",
    "predicate",
    "remove_finalizer",
    "resource_name",
    "resource_version_changed",
]
