"""kubeloop.controller: reconcile loops over shared caches (see docs/controllers.md).

``Controller(name, for_=..., reconcile=fn).owns(...).watches(...)``; ``reconcile(request, ctx)``
returns a ``Result`` or raises (``TerminalError``: do not retry).

Modules: ``_spec`` (the frozen `ControllerSpec`/`SourceSpec` the builder makes), ``_handlers``
(event -> requests), ``_runtime`` (queue, sources, workers), ``_context`` (what a reconcile gets,
through ``_scope``'s narrow `RuntimeView`), ``_readyourwrites`` (the write tracker and its client
write hook), ``_apply``/``_status`` (no-op-skipping writes), ``_targets`` (``ctx.watch_target``:
dynamic targets, docs/targets.md), plus the helpers below.
"""

from kubeloop.cache import CacheNotSynced  # what a reconcile may see; the cache raises it
from kubeloop.controller._context import Context, ResourceArg, TypedResource, resource_name
from kubeloop.controller._controller import Controller
from kubeloop.controller._events import EventRecorder
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
from kubeloop.controller._request import Request, Result, TerminalError
from kubeloop.controller._runtime import ControllerError, Gate
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
    TargetNotDeclared,
    TargetNotSynced,
    UnknownCluster,
)
from kubeloop.meta import (
    AlreadyOwnedError,
    controller_of,
    owner_reference,
    set_controller_reference,
)

__all__ = [
    "AlreadyOwnedError",
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
    "TargetNotDeclared",
    "TargetNotSynced",
    "TerminalError",
    "TypedResource",
    "UnknownCluster",
    "add_finalizer",
    "always",
    "annotations_changed",
    "controller_of",
    "deleting",
    "finalize",
    "finalizers_changed",
    "generation_changed",
    "has_finalizer",
    "is_deleting",
    "labels_changed",
    "owner_reference",
    "predicate",
    "remove_finalizer",
    "resource_name",
    "resource_version_changed",
    "set_controller_reference",
]
