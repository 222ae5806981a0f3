"""kubeloop.controller: reconcile loops over shared caches (see docs/controllers.md).

``Controller(name, for_=..., reconcile=fn).owns(...).watches(...)``; ``reconcile(request, ctx)``
returns a ``Result`` or raises (``TerminalError``: do not retry).
"""

from kubeloop.controller.context import Context, OverlayReader
from kubeloop.controller.controller import Controller, ControllerError, ReconcileFn
from kubeloop.controller.events import EventRecorder
from kubeloop.controller.finalizers import (
    add_finalizer,
    finalize,
    has_finalizer,
    is_deleting,
    remove_finalizer,
)
from kubeloop.controller.ownership import (
    AlreadyOwnedError,
    controller_of,
    owner_reference,
    set_controller_reference,
)
from kubeloop.controller.predicates import (
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
from kubeloop.controller.request import Request, Result, TerminalError
from kubeloop.controller.sources import SourceSpec

__all__ = [
    "AlreadyOwnedError",
    "Context",
    "Controller",
    "ControllerError",
    "EventRecorder",
    "OverlayReader",
    "Predicate",
    "ReconcileFn",
    "Request",
    "Result",
    "SourceSpec",
    "TerminalError",
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
    "resource_version_changed",
    "set_controller_reference",
]
